# wrapper.sh: job.sh, the wrapper that runs the job's command as its child
# and records the child's real status (docs/design.md). The launcher runs
# it as "job.sh run UMASK". It writes meta.json (bg_meta, the part Go
# encoded, then the host's fields with the printf format bg_metafmt) before
# the command can start, and only then reports it to the launcher (a
# launch made in Go writes it for the wrapper: "job.sh run UMASK gate"). The
# configuration block before it sets bg_id; the command: bg_cmd run by bg_sh ("": bash
# where the host has it, else sh), with bg_cmdfile=1 the script in
# command.sh instead, or, when bg_argc > 0, the bg_argc words quoted in
# bg_cmd; bg_envc variables bg_env1 ... as NAME=VALUE; bg_cwd ("": stay);
# bg_stdin (1: read the FIFO stdin); bg_lb (1: line-buffered output, with
# bg_bufs and bg_bufn meta.json's buffering field with stdbuf and without);
# bg_timeout (milliseconds, "": none) and bg_grace (milliseconds); bg_cap
# (the --max-log-size bytes, 0: none); bg_pty (1: run the command on a
# pseudo-terminal, bg_cols by bg_rows); bg_ul (run --ulimit, bg_ulimits). "job.sh timer" (timer.sh, in a
# process group of its own), "job.sh drain STREAM" (drain.sh) and
# "job.sh pty" (pty.sh) are its helpers; wrapper_init.sh comes first,
# before the library's functions: it sets the umask and the traps and
# makes the logs.
# bg_unkeep: end the stdin keeper (KILL: a TERM can be swallowed by a
# keeper not yet sleep, send.sh) unless it has ended already: its pid is
# signalled only while it is the keeper's, by its start time (bg_kst; ""
# when it could not be read, then as before).
bg_unkeep() {
	! bg_ours "$bg_keeper" "$bg_kst" || kill -KILL "$bg_keeper" 2>/dev/null
}
# bg_exitrec: record the job's end, bg_rc: exit_code, the status and its
# newline in one write, with no process started, so that the end is seen
# as soon as the command's (readers take exit_code only whole, bg_exit;
# its time is when it was written, docs/format.md). A file system with no
# space left takes the command's output without a word (its writes fail,
# not the job), and then this write fails too: logs_full says so beside
# the status (an empty file takes no block), which is written over the
# blank exit_code.tmp the launcher made, padded to its length (1<>: never
# truncated, so no block is needed that another writer could take), and
# renamed into place.
bg_exitrec() {
	{ printf '%s\n' "$bg_rc" >"$bg_d/exit_code"; } 2>/dev/null && return 0
	: >"$bg_d/logs_full" 2>/dev/null
	printf '%-3s\n' "$bg_rc" 1<>"$bg_d/exit_code.tmp" && mv -f "$bg_d/exit_code.tmp" "$bg_d/exit_code"
}
if [ "$bg_stdin" = 1 ]; then
	# A keeper holds the FIFO open for writing, so the command sees end of
	# file only when "bgjob send --eof" ends the keeper. The wrapper opens
	# the FIFO itself (read-write, which never blocks) and hands it over,
	# so the keeper holds it before run returns.
	exec 3<>"$bg_d/stdin"
	sleep 2147483647 >&3 3>&- 2>/dev/null &
	bg_keeper=$!
	# Its start time: send --eof ends the keeper, the wrapper reaps it
	# while it waits for the command, and by the job's end its pid may be
	# another process's. bg_unkeep ends only the keeper itself.
	bg_proc "$bg_keeper"
	bg_kst=$bg_s
	# The command's end of the FIFO (4), opened now, while the FIFO has a
	# writer: opened when the command starts, it would wait for one forever
	# if send --eof had ended the keeper in between.
	exec 4<"$bg_d/stdin"
	exec 3>&-
	printf '%s\n' "$bg_keeper" >"$bg_d/stdin.keeper"
fi
# A launch made in Go ("job.sh run UMASK gate", wrapper_init.sh) writes
# meta.json for the wrapper: "m" on fd 3 says it has. Anything else (the
# launcher could not write it, or is gone) and the wrapper writes and
# reports it as for launch.sh.
bg_gate= bg_queue= bg_qwhy= bg_qt=
if [ "${3-}" = gate ]; then
	IFS= read -r bg_gate <&3 || :
	exec 3<&-
fi
if [ "$bg_gate" != m ]; then
	# The wrapper reports its own pid and start time: the launcher cannot
	# read them once a quick job's wrapper has exited.
	if [ -r /proc/self/stat ]; then
		IFS= read -r bg_st </proc/$$/stat
		bg_st=${bg_st##*) }
		set -- $bg_st
		bg_st=${20}
	else
		# One space between words, as bg_proc reads it back ("Dec  1").
		# shellcheck disable=SC2046 # the words on purpose
		set -- $(ps -o lstart= -p $$)
		bg_st="$*"
	fi
	bg_buf=
	if [ "$bg_lb" = 1 ]; then
		if command -v stdbuf >/dev/null 2>&1; then bg_buf=$bg_bufs; else bg_buf=$bg_bufn; fi
	fi
	bg_um=
	case $bg_umask in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) bg_um=',"umask":"'$bg_umask'"' ;; *) bg_umask= ;; esac
	# The host's clock at the start: with ended_at, the job's duration by
	# one clock (started_at is the caller's).
	bg_hs=
	if bg_stamp; then bg_hs=',"host_started_at":"'$bg_ts'"'; fi
	bg_boot=
	if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
	# A job that waits for its turn (--slots, --after, --after-ok) is queued
	# before meta.json names it (queue.sh).
	if [ "$bg_slots" -gt 0 ] || [ -n "$bg_after$bg_afterok" ]; then
		bg_queue=1
		bg_qenter
	fi
	# shellcheck disable=SC2059 # the format is jobdir.MetaHostFormat
	if printf "$bg_metafmt" "$bg_meta" "$bg_buf" "$bg_um" "$bg_hs" "$$" "$$" "$bg_st" "$bg_boot" >"$bg_d/meta.json.tmp" &&
		mv -f "$bg_d/meta.json.tmp" "$bg_d/meta.json"; then
		# A queued job looks at its turn once before it reports, so that
		# run reports it queued only when it waits: one whose turn has come
		# is running (bg_qstart), one that ends without running has ended
		# (bg_qend).
		# The look reads other jobs' meta.json (bg_pick sets bg_st): the
		# wrapper's start time is kept aside for the report.
		if [ -n "$bg_queue" ]; then
			bg_wst=$bg_st
			bg_qlook
			bg_qt=$?
			case $bg_qt in 0) bg_qstart ;; 1) bg_qend ;; esac
			bg_st=$bg_wst
		fi
		# The report is meta.json's line, which the launcher prints without
		# reading the file back (a read takes a system call per byte).
		# shellcheck disable=SC2059 # as above
		printf "$bg_metafmt" "$bg_meta" "$bg_buf" "$bg_um" "$bg_hs" "$$" "$$" "$bg_st" "$bg_boot"
	else
		# No job: nothing of it may run on, the stdin keeper included, nor
		# wait in the queue.
		[ "$bg_stdin" != 1 ] || bg_unkeep
		if [ -n "$bg_queue" ]; then
			bg_qleave
			rm -f "$bg_d/queued"
		fi
		printf 'nometa\n'
		exit 1
	fi
fi
exec >/dev/null
# Its turn: a stop, or a job of --after-ok that did not exit 0, ends the
# job before its command ever runs (bg_qend: the status of the stop's
# signal, or 125 and not_run saying why). --timeout counts from the turn.
# A stop that found meta.json before the command started (its wrapper
# waiting at a gate a slow launcher had not opened yet, which a trapped
# TERM does not cut short under dash) ends it so too: the stop's signals
# reached only the wrapper.
bg_pre=
case $bg_qt in
1) exit 0 ;;
2) if bg_qwait; then bg_qstart; else bg_pre=1; fi ;;
'') [ ! -e "$bg_d/stop" ] || bg_pre=1 ;;
esac
if [ -n "$bg_pre" ]; then
	bg_qend
	exit 0
fi
# The timer and the capper lead process groups of their own, so that one
# signal ends each with its sleep, whatever it is doing.
bg_timer=
if [ -n "$bg_timeout" ]; then
	if command -v setsid >/dev/null 2>&1; then
		setsid /bin/sh "$0" timer $$ </dev/null >/dev/null 2>&1 &
	else
		/bin/sh "$0" timer $$ </dev/null >/dev/null 2>&1 &
	fi
	bg_timer=$!
	# Its start time: a timer that ended before the command (killed) is
	# reaped while the wrapper waits for the command, and by the job's end
	# its pid, and group, may be another process's (bg_ours).
	bg_proc "$bg_timer"
	bg_tst=$bg_s
fi
# With --max-log-size the command writes to pipes that drains (drain.sh)
# copy to the logs, enforcing the cap as they write; fds 5 and 6 hold the
# pipes' write ends until the command has ended.
bg_drains=
if [ "$bg_cap" -gt 0 ] && mkfifo -m 600 "$bg_d/stdout.pipe" "$bg_d/stderr.pipe"; then
	/bin/sh "$0" drain stdout <"$bg_d/stdout.pipe" >/dev/null 2>&1 &
	bg_drains=$!
	/bin/sh "$0" drain stderr <"$bg_d/stderr.pipe" >/dev/null 2>&1 &
	bg_drains="$bg_drains $!"
	exec 5>"$bg_d/stdout.pipe" 6>"$bg_d/stderr.pipe"
	rm -f "$bg_d/stdout.pipe" "$bg_d/stderr.pipe"
else
	exec 5>>"$bg_d/stdout.log" 6>>"$bg_d/stderr.log"
fi
# The job's processes carry its id: bgjob finds by it those that leave
# the group (setsid, a double fork). The timer and the drains are not the
# job's.
BGJOB_JOB_ID=$bg_id
BGJOB_JOB_DIR=$bg_d
export BGJOB_JOB_ID BGJOB_JOB_DIR
# The command's stdin is 4: the FIFO's reading end, or /dev/null.
[ "$bg_stdin" = 1 ] || exec 4</dev/null
case $bg_cwd in '' | /*) ;; *) bg_cwd=./$bg_cwd ;; esac
# The command runs in a subshell (bg_command): neither its variables nor an
# argv that is a shell builtin such as exit or exec can end or change the
# wrapper.
if ! cd "${bg_cwd:-.}" 2>>"$bg_d/stderr.log"; then
	bg_rc=126
elif [ "$bg_pty" = 1 ]; then
	# The command runs on a pseudo-terminal whose master script(1) holds:
	# script leads a session of its own and does not carry the job's id,
	# so a stop's signals reach the command (which does, in the terminal's
	# session script makes) but not script, which lives until its child,
	# "job.sh pty" (pty.sh), has recorded the command's status in
	# exit_code.pty. script's own status counts only when that shell never
	# started (script could not make the terminal); one that started and
	# was killed before it recorded (by someone else: a stop signals only
	# the command) leaves the status unknown, and the job lost. script's
	# status would lie: it is 0 when a signal ends script. -E always: the
	# terminal echoes what is typed, as any terminal does, until the
	# command turns echo off (a password prompt; readline echoes itself).
	(
		BGJOB_SHELL=${SHELL-} SHELL=/bin/sh
		export BGJOB_SHELL SHELL
		unset BGJOB_JOB_ID
		[ -z "$bg_umask" ] || umask "$bg_umask"
		# shellcheck disable=SC2016 # script's shell expands it
		exec setsid script -q -e -f -E always -c 'exec /bin/sh "$BGJOB_JOB_DIR/job.sh" pty' /dev/null
	) <&4 4<&- >&5 2>&"$bg_efd" 5>&- 6>&-
	bg_rc=$?
	if bg_line "$bg_d/exit_code.pty"; then
		case $bg_l in
		run | 'run '*) bg_rc= ;;
		'' | *[!0-9]*) ;;
		*) bg_rc=$bg_l ;;
		esac
	fi
	rm -f "$bg_d/exit_code.pty"
else
	(bg_command) <&4 4<&- >&5 2>&"$bg_efd" 5>&- 6>&-
	bg_rc=$?
fi
exec 4<&-
[ "$bg_stdin" != 1 ] || bg_unkeep
# The timer ends at once while it sleeps; while it stops the job, it ends
# once the group is gone.
exec 5>&- 6>&-
if [ -n "$bg_timer" ]; then
	! bg_ours "$bg_timer" "$bg_tst" ||
		kill -s TERM -- "-$bg_timer" 2>/dev/null || kill -s TERM "-$bg_timer" 2>/dev/null || kill "$bg_timer" 2>/dev/null
	wait "$bg_timer"
fi
# The drains end once the last writer is gone: the command, or what it left
# running (then they go on without the wrapper, after a second).
bg_i=0
for bg_h in $bg_drains; do
	while kill -0 "$bg_h" 2>/dev/null && [ "$bg_i" -lt 10 ]; do
		bg_nap
		bg_i=$((bg_i + 1))
	done
done
# A PTY job whose status is unknown records none: it is lost.
if [ -z "$bg_rc" ]; then
	bg_qdone
	exit 0
fi
bg_exitrec
# The jobs that wait for this one, and the next in the queue if it held a
# slot, are woken (queue.sh).
bg_qdone
