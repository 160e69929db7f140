# stop.sh: stopping jobs (bgjob stop, rm --force, run --replace and the
# --timeout timer): signal the live processes of all the jobs at once,
# KILL what is left after the grace, wait for the wrappers to record.

# bg_kill SIGNAL PID...: send SIGNAL, once; a negative PID names a group.
# dash needs "--" before one, busybox refuses "--" as a pid (and signals
# the others all the same): which this shell takes is asked first, with
# signal 0 to itself, a builtin's test. (A retry without "--" after a
# failure sent the signal twice: where a PID was already gone, and always
# under busybox, where a job's TERM trap ran twice.)
bg_kill() {
	bg_k=$1
	shift
	if kill -s 0 -- $$ 2>/dev/null; then
		kill -s "$bg_k" -- "$@" 2>/dev/null
	else
		kill -s "$bg_k" "$@" 2>/dev/null
	fi
}

# bg_signum SIGNAL: set bg_n to the number of SIGNAL, a name a stop sends
# (scripts.go's signals): the numbers POSIX fixes (HUP 1, INT 2, QUIT 3,
# KILL 9, ALRM 14, TERM 15), else the host's, which kill -l gives for a
# name (bash, busybox) or names for a number (dash takes only numbers);
# 15 (TERM) for a name the host does not know.
bg_signum() {
	case $1 in
	HUP) bg_n=1 ;;
	INT) bg_n=2 ;;
	QUIT) bg_n=3 ;;
	KILL) bg_n=9 ;;
	ALRM) bg_n=14 ;;
	TERM) bg_n=15 ;;
	*)
		bg_n=$(kill -l "$1" 2>/dev/null) || bg_n=
		case $bg_n in '' | *[!0-9]*) ;; *) return 0 ;; esac
		bg_n=1
		while [ "$bg_n" -lt 65 ]; do
			[ "$(kill -l "$bg_n" 2>/dev/null)" != "$1" ] || return 0
			bg_n=$((bg_n + 1))
		done
		bg_n=15
		;;
	esac
}

# bg_signal SIGNAL: send SIGNAL to the processes bg_live found: a signal
# the wrapper traps goes to the whole group (the wrapper survives it) and
# to each process that left it; any other to each process, never the
# wrapper. Then CONT to all of them and the wrapper: a stopped process
# (SIGSTOP, a terminal's Ctrl-Z) holds any other signal until it runs
# again, and a stopped wrapper never records how its job ended, so a stop
# of a stopped job waited, then left it running.
bg_signal() {
	case $1 in
	TERM | INT | QUIT | HUP | USR1 | USR2 | ALRM)
		[ -z "$bg_lgm" ] || bg_kill "$1" "-$bg_w"
		[ -z "$bg_lesc" ] || bg_kill "$1" $bg_lesc
		;;
	*) bg_kill "$1" $bg_lp ;;
	esac
	[ -z "$bg_lgm" ] || bg_kill CONT "-$bg_w"
	bg_kill CONT $bg_lp
}

# bg_stopmark DIR: mark the job in DIR stopped ("REASON SIGNAL", bg_r and
# bg_sig) in its stop file: written over the blank stop.tmp the launch
# made, padded to its length and never truncated, then renamed, so that
# the mark takes no block a full disk could refuse (docs/format.md).
bg_stopmark() {
	printf '%-31s\n' "$bg_r $bg_sig" 1<>"$1/stop.tmp" && mv -f "$1/stop.tmp" "$1/stop"
}

# bg_stop SIGNAL GRACE REASON NOWAIT DIR...: stop the jobs in the DIRs,
# all at once. For each: record the stop (unless the job has already
# ended) and send SIGNAL (KILL for TERM with GRACE 0) to its processes
# (bg_live); then wait up to GRACE
# milliseconds, by the clock, for all of them to exit, SIGKILL what
# is left, one by one, and return once they are gone and (unless NOWAIT is
# nowait: the wrapper's own timer) each wrapper has recorded its status.
# The wrapper traps the signals sent to the group and is never sent KILL,
# so it outlives the command and records its real status. Each round looks
# at the host once (bg_scan) for all the jobs. Sets bg_oc_N to what
# happened to the Nth DIR: stopped, gone or untied (one variable each: a
# list searched by pattern costs the square of its length).
bg_stop() {
	bg_sig=$1 bg_sn=$2 bg_r=$3 bg_nowait=$4
	shift 4
	# No job: no look at the host (the next look makes its own, as after
	# a stop).
	if [ $# = 0 ]; then
		bg_pgs=
		return 0
	fi
	# No grace: a TERM that KILL follows at once only races the job's
	# handler, so the default signal becomes KILL (and the stop says so).
	[ "$bg_sn" -gt 0 ] || [ "$bg_sig" != TERM ] || bg_sig=KILL
	bg_sl= bg_sw= bg_todo=
	# The queued jobs are marked stopped first: a job stopped here that
	# ends gives its slot to the next in the queue, which must find its
	# own stop before it runs.
	for bg_sd in "$@"; do
		if [ -e "$bg_sd/queued" ] && ! bg_exit "$bg_sd" && [ ! -e "$bg_sd/stop" ]; then
			bg_stopmark "$bg_sd"
		fi
	done
	bg_scan
	bg_si=0
	for bg_sd in "$@"; do
		bg_si=$((bg_si + 1))
		# A job without a meta.json (a launch under way or cut short, an
		# unreadable one) is marked stopped whatever is found, and first:
		# a wrapper that writes its meta.json after the mark finds it
		# before its command runs (bg_pre); one that wrote it before, this
		# look finds tied, and its command is waited for below.
		if [ ! -e "$bg_sd/meta.json" ] && [ ! -e "$bg_sd/stop" ] && ! bg_exit "$bg_sd"; then
			bg_stopmark "$bg_sd" 2>/dev/null
		fi
		bg_stied=1
		bg_tied "$bg_sd" || bg_stied=
		bg_live "$bg_sd"
		if [ -z "$bg_stied" ] && [ "$bg_lc" = 0 ]; then
			eval "bg_oc_$bg_si=untied"
			continue
		fi
		if ! bg_exit "$bg_sd" && [ ! -e "$bg_sd/stop" ]; then
			bg_stopmark "$bg_sd"
		fi
		! bg_running "$bg_sd" || bg_sw="$bg_sw $bg_si"
		if [ -e "$bg_sd/queued" ] && bg_running "$bg_sd"; then
			# A queued job: its wrapper, woken, finds the stop and records
			# it, never running the command (queue.sh). What its group
			# holds (a --stdin keeper) is signalled too.
			bg_qwake "$bg_sd"
			# Continued, should it have been stopped (bg_signal).
			bg_kill CONT "$bg_w"
			[ "$bg_lc" = 0 ] || bg_signal "$bg_sig"
			eval "bg_oc_$bg_si=stopped"
		elif [ "$bg_lc" -gt 0 ]; then
			bg_signal "$bg_sig"
			bg_sl="$bg_sl $bg_si"
			eval "bg_oc_$bg_si=stopped"
		elif bg_running "$bg_sd"; then
			# A wrapper that has only just started may not have forked its
			# command; one that was stopped after its command ended has
			# yet to record it (bg_signal).
			bg_kill CONT "$bg_w"
			bg_todo="$bg_todo $bg_si"
		else
			eval "bg_oc_$bg_si=gone"
		fi
	done
	bg_sk=0
	while [ -n "$bg_todo" ]; do
		bg_nap
		bg_scan
		bg_sk=$((bg_sk + 1))
		bg_sx=$bg_todo bg_todo=
		for bg_si in $bg_sx; do
			eval "bg_sd=\${$bg_si}"
			bg_live "$bg_sd"
			if [ "$bg_lc" -gt 0 ]; then
				bg_signal "$bg_sig"
				bg_sl="$bg_sl $bg_si"
				eval "bg_oc_$bg_si=stopped"
			elif bg_running "$bg_sd" && [ "$bg_sk" -lt 20 ]; then
				bg_todo="$bg_todo $bg_si"
			else
				eval "bg_oc_$bg_si=gone"
			fi
		done
	done
	if [ -n "$bg_sl" ]; then
		if [ "$bg_sn" -gt 0 ]; then
			bg_deadline "$bg_sn"
			while bg_stopleft "$@" && bg_intime; do bg_dlnap; done
			# Its clock, unless it has ended (and may have been reaped).
			! bg_ours "$bg_dl" "$bg_dls" || kill "$bg_dl" 2>/dev/null
			bg_dl=
		fi
		# KILL takes effect at once: look again soon (a look itself takes
		# a while with many processes on the host), then every tenth.
		bg_sk=0
		while bg_stopleft "$@" && [ "$bg_sk" -lt 100 ]; do
			bg_kill KILL $bg_sp
			if [ "$bg_sk" -lt 10 ]; then bg_nap 20; else bg_nap; fi
			bg_sk=$((bg_sk + 1))
		done
	fi
	bg_pgs=
	[ "$bg_nowait" != nowait ] || return 0
	bg_sk=0
	while [ -n "$bg_sw" ] && [ "$bg_sk" -lt 60 ]; do
		bg_sx=$bg_sw bg_sw=
		for bg_si in $bg_sx; do
			eval "bg_sd=\${$bg_si}"
			# Until the wrapper is gone, not only until it has recorded the
			# status: the mv that records it is still one of its processes.
			if bg_meta "$bg_sd" && bg_proc "$bg_w" && [ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ]; then bg_sw="$bg_sw $bg_si"; fi
		done
		# A wrapper records the status within milliseconds of its command.
		if [ -z "$bg_sw" ]; then
			:
		elif [ "$bg_sk" -lt 10 ]; then
			bg_nap 20
		else
			bg_nap
		fi
		bg_sk=$((bg_sk + 1))
	done
}

# bg_stopleft DIR...: look at the host again (bg_scan) and succeed when
# the jobs bg_stop signalled (bg_sl, indexes into the DIRs) have live
# processes left, their pids in bg_sp.
bg_stopleft() {
	bg_scan
	bg_sp=
	for bg_sj in $bg_sl; do
		eval "bg_sd=\${$bg_sj}"
		bg_live "$bg_sd"
		bg_sp="$bg_sp$bg_lp"
	done
	[ -n "$bg_sp" ]
}
