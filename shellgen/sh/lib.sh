# bgjob shell library: the functions the scripts share. shellgen puts into
# each script only the functions it calls, directly or through another.
# Variables are prefixed bg_ because POSIX sh has no locals, and each
# function names its temporaries with a prefix of its own (bg_m* in
# bg_members, ...), so that a caller's loop variables survive the call.

# bg_isid NAME: succeed when NAME has the form of a job id: only such
# entries of a workspace are jobs.
bg_isid() {
	case $1 in [0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]-[0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z]) return 0 ;; esac
	return 1
}

# bg_line FILE: set bg_l to the first line of FILE; fail when FILE is missing.
bg_line() {
	bg_l=
	[ -e "$1" ] || return 1
	IFS= read -r bg_l 2>/dev/null <"$1" || :
	return 0
}

# bg_metaline DIR: set bg_l to the first line of DIR/meta.json; fail when
# it is missing or DIR is a symbolic link (never followed). One larger than bg_metamax bytes is not read: bg_l is ""
# and bg_mbig is 1 (no meta.json bgjob writes is that large). One larger
# than 8 KiB is read by head(1), as the shells' read takes a system call
# per byte. Sizes come from find(1): for a job under the directory
# bg_mzscan looked at, from its scan, else one find per job, kept for the
# script's next look (bg_mzc, "<newline>DIR<tab>COUNT" for each).
bg_metaline() {
	bg_l= bg_mbig=
	[ ! -L "$1" ] && [ -e "$1/meta.json" ] || return 1
	bg_mzx=./${1#"${bg_mzs-}"/}/meta.json
	if [ -n "${bg_mzs-}" ] && [ "$bg_mzx" != "./$1/meta.json" ]; then
		case $bg_mzf in
		*"$bg_nl$bg_mzx$bg_nl$bg_mzx$bg_nl"*) bg_mzk=2 ;;
		*"$bg_nl$bg_mzx$bg_nl"*) bg_mzk=1 ;;
		*) bg_mzk=0 ;;
		esac
	else
		case ${bg_mzc-} in
		*"$bg_nl$1$bg_tab"*)
			bg_mzk=${bg_mzc#*"$bg_nl$1$bg_tab"}
			bg_mzk=${bg_mzk%%"$bg_nl"*}
			;;
		*)
			bg_mzk=$(cd "$1" 2>/dev/null && find meta.json -size +8192c -print -size +"$bg_metamax"c -print 2>/dev/null | wc -l)
			bg_mzc="${bg_mzc-}$bg_nl$1$bg_tab$bg_mzk"
			;;
		esac
	fi
	case $bg_mzk in
	*2) bg_mbig=1 ;;
	*1) bg_l=$(head -n 1 "$1/meta.json" 2>/dev/null) ;;
	*) IFS= read -r bg_l 2>/dev/null <"$1/meta.json" || : ;;
	esac
	# A removal may take meta.json between the look above and the read: the
	# job is then being removed, not torn.
	[ -n "$bg_l$bg_mbig" ] || [ -e "$1/meta.json" ] || return 1
	return 0
}

# bg_mzscan BASE GLOB: learn, with one find(1), which of the meta.json
# files GLOB names in BASE are larger than 8 KiB, and which larger than
# bg_metamax bytes (those are printed twice), for bg_metaline to read
# the jobs under BASE.
bg_mzscan() {
	bg_mzs=$1
	# shellcheck disable=SC2086 # GLOB is expanded on purpose
	bg_mzf=$bg_nl$(cd "$1" 2>/dev/null && find $2 -size +8192c -print -size +"$bg_metamax"c -print 2>/dev/null)$bg_nl
}

# bg_proc PID: set bg_s to the start time of process PID and bg_pg to its
# process group ("" when there is no such live process).
bg_proc() {
	bg_s= bg_pg=
	if [ -r /proc/self/stat ]; then
		IFS= read -r bg_s 2>/dev/null <"/proc/$1/stat" || {
			bg_s=
			return 0
		}
		bg_s=${bg_s##*) }
		set -- $bg_s
		if [ "$1" = Z ] || [ "$1" = X ]; then
			bg_s=
			return 0
		fi
		bg_pg=$3 bg_s=${20}
	else
		bg_s=$(ps -o stat= -o pgid= -o lstart= -p "$1" 2>/dev/null) || {
			bg_s=
			return 0
		}
		set -- $bg_s
		case $1 in Z* | '')
			bg_s=
			return 0
			;;
		esac
		bg_pg=$2
		shift 2
		bg_s="$*"
	fi
}

# bg_meta DIR: read DIR/meta.json and set bg_w (the wrapper's pid, also the
# job's process group), bg_st (its start time) and bg_b (the boot id).
bg_meta() {
	bg_metaline "$1" && bg_pick
}

# bg_tied DIR: succeed when the process group recorded in DIR/meta.json can
# be tied to the job, so that it is safe to signal: same boot, and the pid
# has not been handed to an unrelated process that leads a group of its own.
bg_tied() {
	bg_meta "$1" || return 1
	[ "$bg_w" -gt 1 ] || return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_proc "$bg_w"
	if [ -n "$bg_s" ] && [ "$bg_s" != "$bg_st" ] && [ "$bg_pg" = "$bg_w" ]; then
		return 1
	fi
	return 0
}

# bg_kill SIGNAL PID...: send SIGNAL; a negative PID names a group.
bg_kill() {
	bg_k=$1
	shift
	kill -s "$bg_k" -- "$@" 2>/dev/null || kill -s "$bg_k" "$@" 2>/dev/null
}

# bg_nap [SECONDS]: sleep a tenth of a second, or SECONDS (a whole one
# where sleep takes integers only; not when a signal ended the sleep
# early, as the wrapper's TERM to its timer's group does).
bg_nap() {
	sleep "${1:-0.1}" 2>/dev/null || [ $? -gt 128 ] || sleep 1
}

# bg_watchin: end this script with KILL once its stdin ends (the caller
# went away, or gave up at its deadline), and with it every process it
# started (its pipelines, a grep that takes its time): the whole process
# group, when the script leads it, as the runtimes start scripts (locally
# in a group of their own; over SSH sshd gives each session its own and
# the login shell execs the script's sh). Under any other runner only the
# script itself. A watcher in the background holds stdin (an asynchronous
# list gets /dev/null, so through fd 3); kill "$bg_cat" before the script
# ends on its own, and it goes quietly.
bg_watchin() {
	bg_wk=$$
	bg_proc $$
	[ "$bg_pg" != $$ ] || bg_wk=0
	exec 3<&0
	(
		trap 'kill "$bg_wc" 2>/dev/null; exit 0' TERM
		cat <&3 >/dev/null 2>&1 &
		bg_wc=$!
		wait "$bg_wc"
		kill -s KILL "$bg_wk"
	) >/dev/null 2>&1 &
	bg_cat=$!
	exec 3<&-
}

# bg_deadline TENTHS: start the clock of a wait, a sleep of TENTHS tenths
# of a second in the background that wakes this shell (USR1, trapped) when
# it ends; bg_intime succeeds until then, and bg_dlnap naps a tenth of a
# second, less when the clock ends meanwhile. A wait is measured by this
# clock, never by counting naps, so it takes as long as it says however
# long each look takes. Ended early (kill "$bg_dl"), it ends its sleep.
bg_deadline() {
	bg_dlup=
	trap 'bg_dlup=1' USR1
	bg_dlme=$$
	(
		trap 'kill "$bg_dlx" 2>/dev/null; exit 0' TERM
		sleep "$(($1 / 10)).$(($1 % 10))" &
		bg_dlx=$!
		wait "$bg_dlx" && kill -s USR1 "$bg_dlme"
	) >/dev/null 2>&1 &
	bg_dl=$!
	bg_proc "$bg_dl"
	bg_dls=$bg_s
}

# bg_intime: succeed while the clock of bg_deadline runs.
bg_intime() {
	[ -z "$bg_dlup" ] || return 1
	bg_proc "$bg_dl"
	[ -n "$bg_s" ] && [ "$bg_s" = "$bg_dls" ]
}

# bg_dlnap: bg_nap, cut short when the clock of bg_deadline ends (a
# trapped signal ends a wait).
bg_dlnap() {
	bg_nap >/dev/null 2>&1 &
	bg_dln=$!
	[ -n "$bg_dlup" ] || wait "$bg_dln"
	kill "$bg_dln" 2>/dev/null
}

# bg_signal SIGNAL: send SIGNAL to the processes bg_live found: a signal
# the wrapper traps goes to the whole group (the wrapper survives it) and
# to each process that left it; any other to each process, never the
# wrapper.
bg_signal() {
	case $1 in
	TERM | INT | QUIT | HUP | USR1 | USR2 | ALRM)
		[ -z "$bg_lgm" ] || bg_kill "$1" "-$bg_w"
		[ -z "$bg_lesc" ] || bg_kill "$1" $bg_lesc
		;;
	*) bg_kill "$1" $bg_lp ;;
	esac
}

# bg_stop SIGNAL GRACE REASON NOWAIT DIR...: stop the jobs in the DIRs,
# all at once. For each: record the stop (unless the job has already
# ended) and send SIGNAL to its processes (bg_live); then wait up to GRACE
# tenths of a second, by the clock, for all of them to exit, SIGKILL what
# is left, one by one, and return once they are gone and (unless NOWAIT is
# nowait: the wrapper's own timer) each wrapper has recorded its status.
# The wrapper traps the signals sent to the group and is never sent KILL,
# so it outlives the command and records its real status. Each round looks
# at the host once (bg_scan) for all the jobs. Sets bg_oc to what happened
# to each, " N:OUTCOME ..." for the Nth DIR: stopped, gone or untied.
bg_stop() {
	bg_sig=$1 bg_sn=$2 bg_r=$3 bg_nowait=$4
	shift 4
	bg_oc=' ' bg_sl= bg_sw= bg_todo=
	bg_scan
	bg_si=0
	for bg_sd in "$@"; do
		bg_si=$((bg_si + 1))
		bg_stied=1
		bg_tied "$bg_sd" || bg_stied=
		bg_live "$bg_sd"
		if [ -z "$bg_stied" ] && [ "$bg_lc" = 0 ]; then
			bg_oc="$bg_oc$bg_si:untied "
			continue
		fi
		if [ ! -e "$bg_sd/exit_code" ] && [ ! -e "$bg_sd/stop" ]; then
			printf '%s %s\n' "$bg_r" "$bg_sig" >"$bg_sd/stop.tmp" && mv -f "$bg_sd/stop.tmp" "$bg_sd/stop"
		fi
		! bg_running "$bg_sd" || bg_sw="$bg_sw $bg_si"
		if [ "$bg_lc" -gt 0 ]; then
			bg_signal "$bg_sig"
			bg_sl="$bg_sl $bg_si"
			bg_oc="$bg_oc$bg_si:stopped "
		elif bg_running "$bg_sd"; then
			# A wrapper that has only just started may not have forked its
			# command.
			bg_todo="$bg_todo $bg_si"
		else
			bg_oc="$bg_oc$bg_si:gone "
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
				bg_oc="$bg_oc$bg_si:stopped "
			elif bg_running "$bg_sd" && [ "$bg_sk" -lt 20 ]; then
				bg_todo="$bg_todo $bg_si"
			else
				bg_oc="$bg_oc$bg_si:gone "
			fi
		done
	done
	if [ -n "$bg_sl" ]; then
		if [ "$bg_sn" -gt 0 ]; then
			bg_deadline "$bg_sn"
			while bg_stopleft "$@" && bg_intime; do bg_dlnap; done
			kill "$bg_dl" 2>/dev/null
		fi
		# KILL takes effect at once: look again soon (a look itself takes
		# a while with many processes on the host), then every tenth.
		bg_sk=0
		while bg_stopleft "$@" && [ "$bg_sk" -lt 100 ]; do
			bg_kill KILL $bg_sp
			if [ "$bg_sk" -lt 10 ]; then bg_nap 0.02; else bg_nap; fi
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
			bg_nap 0.02
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

# bg_pick: from the meta.json line in bg_l, set bg_w, bg_st and bg_b: the
# last four comma-separated fields are the process fields (their values
# hold no comma). Splitting takes time linear in the line's length, which
# a long command makes large; the shells' longest-prefix patterns would
# take quadratic time.
bg_pick() {
	bg_w= bg_st= bg_b=
	set -f
	bg_oifs=$IFS
	IFS=,
	set -- $bg_l
	IFS=$bg_oifs
	set +f
	[ $# -ge 4 ] || return 1
	eval "bg_w=\${$(($# - 3))} bg_st=\${$(($# - 1))} bg_b=\${$#}"
	case $bg_w in '"pid":'*) ;; *) return 1 ;; esac
	bg_w=${bg_w#\"pid\":}
	bg_st=${bg_st#\"proc_start\":\"}
	bg_st=${bg_st%\"}
	bg_b=${bg_b#\"boot_id\":\"}
	bg_b=${bg_b%\"\}}
	case $bg_w in '' | *[!0-9]*) return 1 ;; esac
	# A ps start time (no /proc) as bg_proc reads it: one space between
	# words (a wrapper of an earlier version wrote ps's "Dec  1").
	case $bg_st in *"  "*)
		set -f
		bg_oifs=$IFS
		IFS=' '
		# shellcheck disable=SC2086 # the words on purpose
		set -- $bg_st
		bg_st="$*"
		IFS=$bg_oifs
		set +f
		;;
	esac
}

# bg_obs DIR [strict]: print the observation records of the job in DIR;
# fail, printing nothing, when DIR is gone (the job was just removed) or
# is a symbolic link (not a job: never followed).
# Without a meta.json only the J record is printed (the job is
# unreadable), or with strict nothing, and it fails.
# The wrapper is looked at before exit_code is read, so a job that ends in
# between is seen as ended, never as lost. A complete exit_code.tmp counts
# too: the wrapper's mv may have been killed by a stop after it wrote it.
# Last comes the L record of its live processes (bg_live), unless
# bg_obslive is 0 (the launcher's report of a job it has just started).
bg_obs() {
	[ ! -L "$1" ] || return 1
	if ! bg_metaline "$1"; then
		# A launch cut short, or a removal under way: reported as is,
		# unless the caller saw a meta.json (strict): then the job is being
		# removed.
		[ -d "$1" ] && [ "${2-}" != strict ] || return 1
		bg_esc "$1"
		printf 'J\t%s\n' "$bg_e"
		return 0
	fi
	bg_esc "$1"
	if [ -n "$bg_mbig" ]; then
		printf 'J\t%s\nV\t%s\n' "$bg_e" "$bg_metamax"
	else
		printf 'J\t%s\nM\t%s\n' "$bg_e" "$bg_l"
	fi
	if bg_pick; then
		bg_proc "$bg_w"
		printf 'P\t%s\n' "$bg_s"
	fi
	if bg_line "$1/exit_code"; then
		printf 'X\t%s\n' "$bg_l"
	elif bg_tmpcode "$1"; then
		printf 'X\t%s\n' "$bg_l"
	fi
	if bg_line "$1/ended_at"; then printf 'T\t%s\n' "$bg_l"; fi
	if bg_line "$1/stop"; then printf 'S\t%s\n' "$bg_l"; fi
	if bg_line "$1/stdout.dropped"; then printf 'Y\tstdout\t%s\n' "$bg_l"; fi
	if bg_line "$1/stderr.dropped"; then printf 'Y\tstderr\t%s\n' "$bg_l"; fi
	if [ "${bg_obslive-1}" = 1 ]; then
		bg_live "$1"
		printf 'L\t%s\t%s\n' "$bg_lc" "$bg_pm"
	fi
	return 0
}

# bg_tmpcode DIR: succeed when DIR/exit_code.tmp holds a status (the
# launcher makes it blank; the wrapper writes the status, then renames it),
# its first line in bg_l.
bg_tmpcode() {
	bg_line "$1/exit_code.tmp" || return 1
	case ${bg_l%% *} in '' | *[!0-9]*) return 1 ;; esac
}

# bg_ispty DIR: succeed when the job in DIR was started with --pty (its
# meta.json says "pty":true).
bg_ispty() {
	grep -q '"pty":true' "$1/meta.json" 2>/dev/null
}

# bg_running DIR: succeed while the wrapper of the job in DIR is alive.
bg_running() {
	bg_meta "$1" || return 1
	[ -e "$1/exit_code" ] && return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_proc "$bg_w"
	[ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ]
}

# bg_busy DIR: succeed while any process of the job in DIR is alive: its
# wrapper, or one that bg_live finds in the host's scan (made on the first
# call: a job with no live process at that moment can get none later).
bg_busy() {
	bg_running "$1" && return 0
	bg_live "$1"
	[ "$bg_lc" -gt 0 ]
}

# bg_scan: look at the host's processes once. Sets bg_pgs to the live (not
# zombie) processes by group, " PGID:PID,PID,... ", and bg_envs to those
# whose environment carries a job id (the wrapper exports BGJOB_JOB_ID),
# " ID:PID:START:PGID ..." with START in clock ticks since boot; bg_pm to
# the method: proc (/proc: groups and environments) or ps (groups only).
# One grep, one cat and one awk, whatever the number of processes.
bg_scan() {
	if [ -r /proc/self/stat ]; then
		bg_pm=proc
		bg_mx=$({
			grep -a -o -s -H 'BGJOB_JOB_ID=[0-9]\{8\}T[0-9]\{6\}-[0-9a-z]\{6\}' /proc/[0-9]*/environ
			echo @
			cat /proc/[0-9]*/stat
		} 2>/dev/null | awk '
			$0 == "@" { s = 1; next }
			!s {
				p = $0; sub(/^\/proc\//, "", p); sub(/\/.*/, "", p)
				i = $0; sub(/.*BGJOB_JOB_ID=/, "", i)
				e[p] = e[p] " " i
				next
			}
			{
				r = $0; sub(/.*\) /, "", r); split(r, f, " ")
				if (f[1] == "Z" || f[1] == "X") next
				g[f[3]] = g[f[3]] "," $1
				if ($1 in e) {
					n = split(e[$1], ids, " ")
					for (k = 1; k <= n; k++) o = o " " ids[k] ":" $1 ":" f[20] ":" f[3]
				}
			}
			END { for (x in g) l = l " " x ":" substr(g[x], 2); print l "|" o }')
	else
		bg_pm='ps'
		bg_mx=$(ps -A -o pid= -o pgid= -o stat= 2>/dev/null | awk '
			$3 !~ /^Z/ { g[$2] = g[$2] "," $1 }
			END { for (x in g) l = l " " x ":" substr(g[x], 2); print l "|" }')
	fi
	bg_pgs="${bg_mx%%|*} "
	bg_envs="${bg_mx#*|} "
}

# bg_live DIR: set bg_lp to the live processes of the job in DIR but its
# wrapper and this script, " PID PID ...", and bg_lc to their number, from
# the host's scan (bg_scan, made on the first call): bg_lgm the members of
# its process group, when the group can be tied to the job, and, on Linux,
# bg_lesc those outside it whose environment carries the job's id (a
# setsid or double-forked daemon), of the same user, started after the job
# on the same boot; and, on a PTY job, the other members of the process
# group of the terminal's shell. A process that cleared its environment
# and left those groups is not found.
bg_live() {
	bg_lp= bg_lc=0 bg_lgm= bg_lesc=
	# The id first: listing the group's members below sets the arguments.
	bg_lid=${1##*/} bg_ldir=$1
	[ -n "${bg_pgs-}" ] || bg_scan
	bg_ltied=
	if bg_tied "$1"; then
		bg_ltied=1
	else
		bg_meta "$1" || return 0
		[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 0
	fi
	if [ -n "$bg_ltied" ]; then
		case $bg_pgs in *" $bg_w:"*)
			bg_lx=${bg_pgs#*" $bg_w:"}
			bg_lx=${bg_lx%% *}
			bg_oifs=$IFS
			IFS=,
			set -- $bg_lx
			IFS=$bg_oifs
			for bg_lx in "$@"; do
				[ "$bg_lx" = "$bg_w" ] || [ "$bg_lx" = $$ ] || bg_lgm="$bg_lgm $bg_lx"
			done
			;;
		esac
	fi
	bg_lx=$bg_envs
	while :; do
		case $bg_lx in *" $bg_lid:"*) ;; *) break ;; esac
		bg_lx=${bg_lx#*" $bg_lid:"}
		bg_le=${bg_lx%% *}
		bg_lq=${bg_le%%:*}
		bg_le=${bg_le#*:}
		bg_ls=${bg_le%%:*}
		if [ -n "$bg_ltied" ] && [ "${bg_le#*:}" = "$bg_w" ]; then continue; fi
		if [ "$bg_lq" = "$bg_w" ] || [ "$bg_lq" = $$ ] || [ ! -O "/proc/$bg_lq" ]; then continue; fi
		case $bg_st in '' | *[!0-9]*) ;; *) [ "$bg_ls" -ge "$bg_st" ] || continue ;; esac
		case "$bg_lesc " in *" $bg_lq "*) continue ;; esac
		bg_lesc="$bg_lesc $bg_lq"
	done
	# A PTY job's command runs in the process group of the terminal's
	# shell, "job.sh pty", whose pid and start time exit_code.pty holds
	# while the command runs: its other members are the job's too, each
	# signalled alone (the shell must live to record the status).
	if [ -n "$bg_ltied" ] && bg_line "$bg_ldir/exit_code.pty"; then
		case $bg_l in 'run '[0-9]*' '[0-9]*)
			bg_lx=${bg_l#run }
			bg_lq=${bg_lx%% *}
			bg_ls=${bg_lx#* }
			case $bg_pgs in *" $bg_lq:"*)
				bg_lx=${bg_pgs#*" $bg_lq:"}
				bg_lx=${bg_lx%% *}
				if [ "$(sed 's/.*) //' "/proc/$bg_lq/stat" 2>/dev/null | cut -d' ' -f20)" = "$bg_ls" ]; then
					bg_oifs=$IFS
					IFS=,
					set -- $bg_lx
					IFS=$bg_oifs
					for bg_lx in "$@"; do
						if [ "$bg_lx" = "$bg_lq" ] || [ "$bg_lx" = $$ ]; then continue; fi
						case "$bg_lesc " in *" $bg_lx "*) continue ;; esac
						bg_lesc="$bg_lesc $bg_lx"
					done
				fi
				;;
			esac
			;;
		esac
	fi
	bg_lp=$bg_lgm$bg_lesc
	# shellcheck disable=SC2086 # the pids are words on purpose
	set -- $bg_lp
	bg_lc=$#
}

# bg_find WSDIR REF: set bg_d to the job directory REF names in WSDIR: the
# job with that id, else the newest job with that name: the one the name
# index WSDIR/.names/REF names, else the newest 20 jobs are read by the
# shell and older ones searched with grep. An entry that is a symbolic
# link is no job, never followed; when it fails, bg_fk is the kind of the
# refusal: symlink when REF is an id whose entry is a link, else notfound.
bg_find() {
	bg_d= bg_fk=notfound
	if [ -L "$1/$2" ] && bg_isid "$2"; then
		bg_fk=symlink
		return 1
	fi
	if [ ! -L "$1/$2" ] && [ -e "$1/$2/meta.json" ]; then
		bg_d=$1/$2
		return 0
	fi
	bg_fw=$1 bg_fn=$2
	# The name index holds the id of the newest job launched with the name;
	# the job's own meta.json must agree, else the directories are searched.
	if bg_line "$1/.names/$2"; then
		case $bg_l in
		'' | *[!0-9a-zT-]*) ;;
		*)
			bg_fx=$1/$bg_l
			if bg_metaline "$bg_fx"; then
				case $bg_l in *"\"name\":\"$bg_fn\""*)
					bg_d=$bg_fx
					return 0
					;;
				esac
			fi
			;;
		esac
	fi
	bg_mzscan "$1" './[0-9]*/meta.json'
	set -- "$1"/[0-9]*
	bg_fi=$# bg_fj=0
	while [ "$bg_fi" -gt 0 ] && [ "$bg_fj" -lt 20 ]; do
		eval "bg_fx=\${$bg_fi}"
		if bg_metaline "$bg_fx"; then
			case $bg_l in *"\"name\":\"$bg_fn\""*)
				bg_d=$bg_fx
				return 0
				;;
			esac
		fi
		bg_fi=$((bg_fi - 1))
		bg_fj=$((bg_fj + 1))
	done
	[ "$bg_fi" -gt 0 ] || return 1
	# Older jobs: let grep read their meta.json, the newest match last.
	bg_fx=$(printf '%s\0' "$bg_fw"/[0-9]*/meta.json | xargs -0 grep -l -F -e "\"name\":\"$bg_fn\"" 2>/dev/null)
	while [ -n "$bg_fx" ]; do
		bg_fy=${bg_fx##*"$bg_nl"}
		bg_fy=${bg_fy%/meta.json}
		if [ ! -L "$bg_fy" ]; then
			bg_d=$bg_fy
			return 0
		fi
		case $bg_fx in *"$bg_nl"*) bg_fx=${bg_fx%"$bg_nl"*} ;; *) bg_fx= ;; esac
	done
	return 1
}

# bg_err KIND MESSAGE: report an error record and end the script.
bg_err() {
	bg_esc "$2"
	printf 'E\t%s\t%s\n' "$1" "$bg_e"
	bg_end
	exit 0
}

# bg_esc STRING: set bg_e to STRING with backslash, newline and tab written
# as \\, \n and \t, so that a path or message from the filesystem or a user
# stays one field of one record.
bg_esc() {
	bg_e=$1
	case $bg_e in *[\\"$bg_nl$bg_tab"]*) ;; *) return 0 ;; esac
	bg_eo=
	while [ -n "$bg_e" ]; do
		bg_ec=${bg_e%"${bg_e#?}"}
		bg_e=${bg_e#?}
		case $bg_ec in
		\\) bg_eo="$bg_eo\\\\" ;;
		"$bg_nl") bg_eo="$bg_eo\\n" ;;
		"$bg_tab") bg_eo="$bg_eo\\t" ;;
		*) bg_eo=$bg_eo$bg_ec ;;
		esac
	done
	bg_e=$bg_eo
}

# bg_end: write the end marker.
bg_end() {
	printf '\n@@bgjob-end@@\n'
}

# bg_readroot: check the root before reading from it.
bg_readroot() {
	if [ -L "$bg_root" ]; then bg_err root "root $bg_root is a symbolic link"; fi
	if [ -d "$bg_root" ] && [ ! -O "$bg_root" ]; then bg_err root "root $bg_root is owned by another user"; fi
	if [ -n "${bg_ws-}" ] && [ -L "$bg_ws" ]; then bg_err root "workspace $bg_ws is a symbolic link"; fi
}

# bg_makeroot: create the root (mode 0700) or check that it is safe.
bg_makeroot() {
	bg_readroot
	if [ ! -d "$bg_root" ]; then
		# shellcheck disable=SC2174 # only the root itself is made private
		mkdir -p -m 700 "$bg_root" 2>/dev/null || bg_err root "cannot create root $bg_root"
	fi
	[ -O "$bg_root" ] || bg_err root "root $bg_root is owned by another user"
	# The mode is checked the first time a root is used; .bgjob-root, a
	# file only its owner can have created there, records that it passed.
	if [ ! -O "$bg_root/.bgjob-root" ]; then
		case $(ls -ld "$bg_root" 2>/dev/null) in
		d????w* | d???????w*) bg_err root "root $bg_root is writable by other users (want mode 0700)" ;;
		esac
		: >"$bg_root/.bgjob-root"
	fi
}

# bg_cursorlock FILE: take the lock FILE of a read cursor, waiting up to
# 5 s, or end the script with an E busy record. With flock(1) the kernel
# drops the lock when its holder dies; without it, a directory FILE.d
# holds the holder's pid and start time, and a holder that is gone loses
# it. bg_cursorunlock lets it go.
bg_cursorlock() {
	bg_lf=$1 bg_li=0
	if command -v flock >/dev/null 2>&1; then
		exec 8>>"$bg_lf" || bg_err io "cannot open the cursor lock $bg_lf"
		# -n, not -w: busybox's flock has only -n.
		until flock -n 8; do
			bg_li=$((bg_li + 1))
			[ "$bg_li" -lt 50 ] || bg_err cursorbusy "the read cursor is busy: another reader holds $bg_lf"
			bg_nap
		done
		bg_lf=
		return 0
	fi
	bg_me=$$
	if [ -r /proc/self/stat ]; then IFS=' ' read -r bg_me bg_l <"/proc/self/stat"; fi
	bg_proc "$bg_me"
	bg_lown="$bg_me $bg_s"
	until mkdir "$bg_lf.d" 2>/dev/null; do
		if bg_line "$bg_lf.d/owner"; then
			bg_proc "${bg_l%% *}"
			if [ -z "$bg_s" ] || [ "$bg_s" != "${bg_l#* }" ]; then
				rm -rf "$bg_lf.d"
				continue
			fi
		fi
		bg_li=$((bg_li + 1))
		[ "$bg_li" -lt 50 ] || bg_err cursorbusy "the read cursor is busy: another reader holds $bg_lf.d"
		bg_nap
	done
	printf '%s\n' "$bg_lown" >"$bg_lf.d/owner"
}

# bg_cursorunlock: let go of the lock bg_cursorlock took.
bg_cursorunlock() {
	if [ -n "$bg_lf" ]; then rm -rf "$bg_lf.d"; else exec 8>&-; fi
}

# bg_chunk STREAM FILE FROM TO: print bytes FROM..TO of FILE as D records
# (see records.go). Once the job has ended (bg_live=0) the bytes cannot
# change, and one record carries them (one tail from the end when TO is the
# file's end, bg_sz). While it runs, the --max-log-size capper may drop
# bytes as they are read, so the range goes out in pieces of at most 1 MiB,
# each followed by a C record with the dropped count read after the piece:
# the reader discards what lies below it. (The capper records a drop before
# it punches the hole, so bytes at or above that count were read intact.)
bg_chunk() {
	if [ "${bg_live-1}" = 0 ]; then
		printf 'D\t%s\t%s\t%s\t0\n' "$1" "$3" $(($4 - $3))
		[ "$4" -gt "$3" ] || return 0
		if [ "$4" = "${bg_sz-}" ]; then
			tail -c $(($4 - $3)) "$2"
		else
			tail -c +$(($3 + 1)) "$2" | head -c $(($4 - $3))
		fi
		return 0
	fi
	bg_cf=$3
	while :; do
		bg_ct=$((bg_cf + 1048576))
		[ "$bg_ct" -le "$4" ] || bg_ct=$4
		printf 'D\t%s\t%s\t%s\t1\n' "$1" "$bg_cf" $((bg_ct - bg_cf))
		if [ "$bg_ct" -gt "$bg_cf" ]; then tail -c +$((bg_cf + 1)) "$2" | head -c $((bg_ct - bg_cf)); fi
		bg_cd=0
		if bg_line "${2%.log}.dropped"; then bg_cd=${bg_l:-0}; fi
		printf 'C\t%s\t%s\n' "$1" "$bg_cd"
		bg_cf=$bg_ct
		[ "$bg_cf" -lt "$4" ] || return 0
	done
}

# bg_utf8end FILE SIZE: set bg_to to SIZE less an incomplete UTF-8 sequence
# at the end of the first SIZE bytes of FILE.
bg_utf8end() {
	bg_to=$2
	bg_k=3
	[ "$2" -ge 3 ] || bg_k=$2
	[ "$bg_k" -gt 0 ] || return 0
	# shellcheck disable=SC2046 # the bytes are words on purpose
	set -- $(tail -c +$(($2 - bg_k + 1)) "$1" | head -c "$bg_k" | od -An -tu1)
	bg_have=0
	while [ $# -gt 0 ]; do
		eval "bg_c=\${$#}"
		bg_have=$((bg_have + 1))
		if [ "$bg_c" -lt 128 ]; then return 0; fi
		if [ "$bg_c" -ge 192 ]; then
			bg_need=2
			[ "$bg_c" -lt 224 ] || bg_need=3
			[ "$bg_c" -lt 240 ] || bg_need=4
			[ "$bg_have" -ge "$bg_need" ] || bg_to=$((bg_to - bg_have))
			return 0
		fi
		# drop the last positional parameter
		bg_a=
		bg_uj=1
		for bg_ux in "$@"; do
			[ "$bg_uj" -lt $# ] && bg_a="$bg_a $bg_ux"
			bg_uj=$((bg_uj + 1))
		done
		set -- $bg_a
	done
}

# bg_escend FILE FROM: on a PTY job's log, take off the end of the bytes
# FROM to bg_to an escape sequence cut off there, or carriage returns a
# newline may follow, as termtext sees them, so that a read that goes on
# from bg_to does not start inside a sequence (logs --plain would print
# its tail as text). It looks at the last 4 KiB only, and never makes the
# range empty: a longer sequence, or a range that is all sequence, stays.
bg_escend() {
	bg_k=$((bg_to - $2))
	[ "$bg_k" -le 4096 ] || bg_k=4096
	[ "$bg_k" -gt 0 ] || return 0
	bg_k=$(tail -c +$((bg_to - bg_k + 1)) "$1" | head -c "$bg_k" | od -An -v -tu1 | awk '
	{ for (i = 1; i <= NF; i++) b[n++] = $i + 0 }
	END {
		e = -1
		for (i = n - 1; i >= 0; i--) if (b[i] == 27) { e = i; break }
		cut = n
		if (e >= 0) {
			done = 0
			c = (e + 1 < n) ? b[e + 1] : -1
			if (c == 91 || (c >= 32 && c <= 47)) {
				lo = 32; hi = 63
				if (c != 91) hi = 47
				for (j = e + 2; j < n; j++) if (b[j] < lo || b[j] > hi) { done = 1; break }
			} else if (c == 93 || c == 80 || c == 88 || c == 94 || c == 95) {
				for (j = e + 2; j < n; j++) if (b[j] == 7 || b[j] == 24 || b[j] == 26 || b[j] == 10) { done = 1; break }
			} else if (c >= 0) {
				done = 1
			}
			if (!done) cut = e
		}
		while (cut > 0 && b[cut - 1] == 13) cut--
		if (cut == 0) cut = n
		print n - cut
	}')
	bg_to=$((bg_to - ${bg_k:-0}))
}

# bg_rm DIR: remove the job in DIR, printing an R record, or an E record
# saying why not. A job with live processes is refused (rm.sh stops it
# first when forced). Only the files bgjob writes are deleted, then the
# directory; links are never followed.
bg_rm() {
	bg_esc "$1"
	if [ -L "$1" ]; then
		printf 'E\tsymlink\t%s\n' "${bg_e##*/}"
		return 0
	fi
	if [ ! -d "$1" ]; then
		printf 'E\tnotfound\t%s\n' "${bg_e##*/}"
		return 0
	fi
	case ${1%/*} in "$bg_root"/*) ;; *)
		printf 'E\toutside\t%s\n' "$bg_e"
		return 0
		;;
	esac
	if bg_busy "$1"; then
		printf 'E\tbusy\t%s\n' "${bg_e##*/}"
		return 0
	fi
	if [ ! -w "$1" ] || [ ! -w "${1%/*}" ]; then
		if [ -d "$1" ]; then printf 'E\treadonly\t%s\n' "$bg_e"; else printf 'E\tnotfound\t%s\n' "${bg_e##*/}"; fi
		return 0
	fi
	# Anything bgjob did not write stays, and so does the whole job: all is
	# checked before anything is deleted. A wrapper that is just recording
	# its status, or a concurrent rm, can change the directory meanwhile:
	# look again, a few times.
	bg_ri=0
	while :; do
		for bg_rx in "$1"/* "$1"/.[!.]* "$1"/..?*; do
			[ -e "$bg_rx" ] || [ -L "$bg_rx" ] || continue
			case ${bg_rx##*/} in
			meta.json | meta.json.tmp | job.sh | command.sh | stdout.log | stderr.log | exit_code | exit_code.tmp | exit_code.pty | \
				ended_at | ended_at.tmp | stop | stop.tmp | stdin | stdin.keeper | cursor-* | std???.dropped | std???.dropped.tmp* | std???.pipe) ;;
			*)
				printf 'E\tnotempty\t%s\n' "$bg_e"
				return 0
				;;
			esac
		done
		rm -f "$1/meta.json" "$1/meta.json.tmp" "$1/job.sh" "$1/command.sh" "$1/stdout.log" "$1/stderr.log" \
			"$1/exit_code" "$1/exit_code.tmp" "$1/exit_code.pty" "$1/ended_at" "$1/ended_at.tmp" "$1/stop" "$1/stop.tmp" \
			"$1/stdin" "$1/stdin.keeper" "$1"/cursor-* "$1"/std???.dropped "$1"/std???.dropped.tmp* "$1"/std???.pipe 2>/dev/null
		# Lock directories: cursor-READER.lock.d, and cursor-READER.lock of
		# earlier versions.
		for bg_rx in "$1"/cursor-*.lock "$1"/cursor-*.lock.d; do [ ! -d "$bg_rx" ] || rm -rf "$bg_rx"; done
		if rmdir "$1" 2>/dev/null; then
			printf 'R\t%s\n' "$bg_e"
			return 0
		fi
		if [ ! -d "$1" ]; then
			printf 'E\tnotfound\t%s\n' "${bg_e##*/}"
			return 0
		fi
		bg_ri=$((bg_ri + 1))
		if [ "$bg_ri" -ge 5 ]; then
			printf 'E\tnotempty\t%s\n' "$bg_e"
			return 0
		fi
		bg_nap
	done
}

# bg_epoch STAMP: set bg_ep to the seconds since 1970 of STAMP, a UTC time
# written as in a job id (YYYYmmddTHHMMSS...) or in ended_at
# (YYYY-mm-ddTHH:MM:SSZ, or with a fraction of a second, YYYY-mm-ddTHH:MM:SS.fffZ:
# its whole seconds); fail on anything else. Shell arithmetic only, so
# that it works with any date(1).
bg_epoch() {
	bg_ep=
	case $1 in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].*[0-9]Z)
		bg_ef=${1#*.}
		case ${bg_ef%Z} in *[!0-9]*) return 1 ;; esac
		bg_epoch "${1%%.*}Z"
		return
		;;
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z)
		bg_oifs=$IFS
		IFS=-T:Z
		set -- $1
		IFS=$bg_oifs
		;;
	[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]*)
		bg_ed=${1%%T*} bg_et=${1#*T}
		bg_et=${bg_et%"${bg_et#??????}"}
		set -- "${bg_ed%????}" "${bg_ed#????}" "$bg_et"
		set -- "$1" "${2%??}" "${2#??}" "${3%????}" "${3#??}" "${3#????}"
		set -- "$1" "$2" "$3" "$4" "${5%??}" "$6"
		;;
	*) return 1 ;;
	esac
	bg_ey=$1 bg_em=${2#0} bg_eday=${3#0}
	[ "$bg_em" -gt 2 ] || bg_ey=$((bg_ey - 1))
	if [ "$bg_em" -gt 2 ]; then bg_em=$((bg_em - 3)); else bg_em=$((bg_em + 9)); fi
	bg_eera=$((bg_ey / 400))
	bg_ey=$((bg_ey - bg_eera * 400))
	bg_eday=$((bg_eera * 146097 + bg_ey * 365 + bg_ey / 4 - bg_ey / 100 + (153 * bg_em + 2) / 5 + bg_eday - 1 - 719468))
	bg_ep=$((bg_eday * 86400 + ${4#0} * 3600 + ${5#0} * 60 + ${6#0}))
}

# bg_stamp: set bg_ts to the host's clock as ended_at holds it: UTC,
# YYYY-mm-ddTHH:MM:SS.fffZ (milliseconds, as started_at) where date(1)
# knows %N, else to the second (busybox and BSD dates print it as it
# is); fail, bg_ts "", when date prints no time at all.
bg_stamp() {
	bg_ts=$(date -u '+%Y-%m-%dT%H:%M:%S.%N' 2>/dev/null) || bg_ts=
	bg_tf=${bg_ts#*.}
	bg_ts=${bg_ts%%.*}
	case $bg_ts in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]) ;;
	*)
		bg_ts=
		return 1
		;;
	esac
	case $bg_tf in
	[0-9][0-9][0-9]*) case $bg_tf in *[!0-9]*) ;; *) bg_ts=$bg_ts.${bg_tf%"${bg_tf#???}"} ;; esac ;;
	esac
	bg_ts=${bg_ts}Z
}

# bg_now: set bg_nw to the host's clock, in seconds since 1970.
bg_now() {
	bg_epoch "$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	bg_nw=$bg_ep
}

# bg_ended DIR: succeed when the job in DIR has ended: exit_code written,
# or its meta.json read and its wrapper gone (lost).
bg_ended() {
	[ -e "$1/exit_code" ] && return 0
	bg_meta "$1" || return 1
	! bg_running "$1"
}

# bg_prunable DIR NEWER: succeed when the job in DIR, with NEWER ended jobs
# newer than it, is one that prune removes: it has ended (bg_ended), its
# files are bgjob's (meta.json names the directory, exit_code is a
# number), and by bg_prule: either (bgjob prune) at least bg_keep ended
# jobs are newer (0: no count limit) or it ended (ended_at, else its start
# for a lost job) more than bg_age seconds (0: no age limit) before bg_nw;
# both (run's pass) each limit that is set holds; all, whatever the
# limits. Whether it still has processes is left to the caller. A directory without meta.json (a launch cut short) is prunable a
# minute after its start. This is the one prune rule: bgjob prune and
# run's pass use it.
bg_prunable() {
	[ ! -L "$1" ] || return 1
	if [ ! -e "$1/meta.json" ]; then
		# A launch cut short: the wrapper writes meta.json before the
		# command starts, so after a minute nothing runs there.
		bg_epoch "${1##*/}" && [ $((bg_nw - bg_ep)) -gt 60 ]
		return
	fi
	bg_ended "$1" || return 1
	bg_meta "$1" || return 1
	case $bg_l in '{'*"\"id\":\"${1##*/}\""*'}') ;; *) return 1 ;; esac
	if bg_line "$1/exit_code"; then
		case $bg_l in '' | *[!0-9]*) return 1 ;; esac
	fi
	[ "$bg_prule" != all ] || return 0
	bg_pc= bg_pa=
	if [ "$bg_keep" -gt 0 ] && [ "$2" -ge "$bg_keep" ]; then bg_pc=1; fi
	if [ "$bg_age" -gt 0 ]; then
		if bg_line "$1/ended_at" && bg_epoch "$bg_l"; then :; else bg_epoch "${1##*/}" || return 1; fi
		[ $((bg_nw - bg_ep)) -le "$bg_age" ] || bg_pa=1
	fi
	if [ "$bg_prule" = both ]; then
		{ [ "$bg_keep" = 0 ] || [ -n "$bg_pc" ]; } && { [ "$bg_age" = 0 ] || [ -n "$bg_pa" ]; }
	else
		[ -n "$bg_pc$bg_pa" ]
	fi
}

# bg_autoprune: run's pruning pass over the workspace: remove up to 20 jobs
# that bg_prunable selects (bg_prule both) and bg_busy clears, looking at
# no more than 64, oldest first. It counts the ended jobs first (a test of
# exit_code per job, and a look at the wrapper of those without one). Only
# the oldest jobs can qualify (a job ends after it starts), so the pass
# stops at the first that has fewer than bg_keep ended jobs after it or
# started less than bg_age seconds ago; a cursor, .prune-cursor, makes the next pass go
# on where a full one stopped. Directories without meta.json go first,
# whatever the limits. One pass at a time: .prune.lock holds the
# pid and start time of the pass.
bg_autoprune() {
	bg_me=
	if [ -r /proc/self/stat ]; then
		IFS=' ' read -r bg_me bg_l <"/proc/self/stat"
	else
		bg_me=$(sh -c 'echo "$PPID"')
	fi
	bg_proc "$bg_me"
	bg_lk=$bg_ws/.prune.lock
	if ! mkdir "$bg_lk" 2>/dev/null; then
		bg_line "$bg_lk/owner" || return 0
		bg_proc "${bg_l%% *}"
		[ -n "$bg_s" ] && [ "$bg_s" = "${bg_l#* }" ] && return 0
		rm -rf "$bg_lk"
		mkdir "$bg_lk" 2>/dev/null || return 0
		bg_proc "$bg_me"
	fi
	printf '%s %s\n' "$bg_me" "$bg_s" >"$bg_lk/owner"
	bg_now
	bg_cur=
	if bg_line "$bg_ws/.prune-cursor"; then bg_cur=$bg_l; fi
	bg_mzscan "$bg_ws" './[0-9]*/meta.json'
	set -- "$bg_ws"/[0-9]*
	# A directory without meta.json a minute after its start is a launch
	# cut short (bg_prunable): it goes whatever the limits, as its job.sh
	# holds the --env values. One test of a file per directory.
	for bg_ax in "$@"; do
		[ ! -e "$bg_ax/meta.json" ] && bg_isid "${bg_ax##*/}" && bg_prunable "$bg_ax" 0 && ! bg_busy "$bg_ax" && bg_rm "$bg_ax" >/dev/null
	done
	# Below the keep limit, or with the oldest job younger than the age
	# limit, there is nothing to do: no job can qualify.
	bg_ep=$bg_nw
	for bg_ax in "$@"; do
		if bg_isid "${bg_ax##*/}" && bg_epoch "${bg_ax##*/}"; then break; fi
	done
	if [ $# -le "$bg_keep" ] || { [ "$bg_age" -gt 0 ] && [ $((bg_nw - bg_ep)) -le "$bg_age" ]; }; then
		rm -rf "$bg_lk"
		return 0
	fi
	bg_newer=0
	for bg_ax in "$@"; do
		if [ ! -L "$bg_ax" ] && bg_isid "${bg_ax##*/}" && bg_ended "$bg_ax"; then bg_newer=$((bg_newer + 1)); fi
	done
	bg_look=0 bg_gone=0
	for bg_ax in "$@"; do
		bg_aid=${bg_ax##*/}
		if ! bg_isid "$bg_aid" || [ -L "$bg_ax" ]; then continue; fi
		bg_aend=
		if bg_ended "$bg_ax"; then
			bg_newer=$((bg_newer - 1))
			bg_aend=1
		fi
		[ "$bg_newer" -ge "$bg_keep" ] || break
		if [ "$bg_age" -gt 0 ]; then
			# shellcheck disable=SC2015 # the break is the else of the whole test
			bg_epoch "$bg_aid" && [ $((bg_nw - bg_ep)) -gt "$bg_age" ] || break
		fi
		if [ -n "$bg_cur" ]; then
			[ "$bg_aid" \> "$bg_cur" ] || continue
		fi
		bg_look=$((bg_look + 1))
		if { [ -n "$bg_aend" ] || [ ! -e "$bg_ax/meta.json" ]; } && bg_prunable "$bg_ax" "$bg_newer" && ! bg_busy "$bg_ax"; then
			bg_rm "$bg_ax" >/dev/null
			bg_gone=$((bg_gone + 1))
		fi
		if [ "$bg_look" -ge 64 ] || [ "$bg_gone" -ge 20 ]; then
			printf '%s\n' "$bg_aid" >"$bg_ws/.prune-cursor"
			rm -rf "$bg_lk"
			return 0
		fi
	done
	rm -f "$bg_ws/.prune-cursor"
	rm -rf "$bg_lk"
}

# bg_command: run the job's command with its --env variables, umask and
# buffering, in the calling subshell (wrapper.sh, pty.sh), from the
# configuration of job.sh. It first lays out, in its arguments, the
# variables to export, "--" and the command's words, so that no variable
# of the wrapper's is read once a variable from --env may have replaced it.
# An argv's words come quoted in bg_cmd, laid out by one eval: a loop that
# added them one at a time would copy the list each time.
bg_command() {
	set --
	[ "$bg_lb" != 1 ] || set -- PYTHONUNBUFFERED=1
	bg_i=1
	while [ "$bg_i" -le "$bg_envc" ]; do
		eval "set -- \"\$@\" \"\$bg_env$bg_i\""
		bg_i=$((bg_i + 1))
	done
	set -- "$@" --
	[ -z "$bg_umask" ] || umask "$bg_umask"
	if [ "$bg_lb" = 1 ] && command -v stdbuf >/dev/null 2>&1; then set -- "$@" stdbuf -oL -eL; fi
	if [ "$bg_argc" -gt 0 ]; then
		eval "set -- \"\$@\" $bg_cmd"
	else
		if [ -z "$bg_sh" ]; then
			# shellcheck disable=SC2209 # sh is the name of the shell
			bg_sh=sh
			command -v bash >/dev/null 2>&1 && bg_sh=bash
		fi
		if [ "$bg_cmdfile" = 1 ]; then
			set -- "$@" "$bg_sh" "$bg_d/command.sh"
		else
			set -- "$@" "$bg_sh" -c "$bg_cmd"
		fi
	fi
	while [ "$1" != -- ]; do
		# shellcheck disable=SC2163 # $1 is NAME=VALUE
		export "$1"
		shift
	done
	shift
	# The subshell becomes the command where it is a program (one process,
	# as a subshell's last command would be); a builtin such as exit runs
	# in it.
	case $(command -v -- "$1" 2>/dev/null) in */*) exec "$@" ;; esac
	command "$@"
}
