# launch.sh: create the job directory, write the wrapper (bg_wrapper) to
# job.sh and start it in a session of its own, passing it the caller's
# umask; the wrapper writes meta.json before its command can start, so a
# job is visible before it runs, and the launcher reports it. Also set:
# bg_id, bg_name, bg_cwd, bg_stdin, bg_pty, bg_metasmall (1: meta.json
# is under 8 KiB, whatever the host adds), and bg_script (a script
# command too long for one argument, "": none; the wrapper runs it from
# command.sh). launch_pty.sh (a PTY job),
# then launch_name.sh or launch_replace.sh (bg_rgrace; a named job) come
# before it; launch_prune.sh may follow. A launch cut short all the same
# (killed) leaves at most a directory without meta.json and nothing
# running: once it has not changed for a minute, ls reports it, and prune
# removes it (bg_launching).
bg_makeroot
if [ -n "$bg_cwd" ] && [ ! -d "$bg_cwd" ]; then
	[ ! -e "$bg_cwd" ] || bg_err cwd "working directory $bg_cwd is not a directory"
	bg_err cwd "working directory $bg_cwd does not exist"
fi
if [ ! -d "$bg_ws" ] && ! bg_why=$(LC_ALL=C mkdir -p "$bg_ws" 2>&1); then
	bg_reason "$bg_why"
	bg_err io "cannot create workspace directory $bg_ws${bg_rs:+: $bg_rs}"
fi
# A job of the same name: warn (launch_name.sh), or with --replace stop it
# (launch_replace.sh), which holds the name's lock bg_namelk until the new
# job runs.
bg_namelk=
[ -z "$bg_name" ] || bg_samename
# From its mkdir on, a launch ends by itself, its job started or what it
# made removed: a caller gone no longer ends a --replace launch
# (bg_watchin), nor does bgjob cut a launch it no longer waits for.
[ -z "$bg_namelk" ] || bg_unwatch
bg_d=$bg_ws/$bg_id
if ! bg_why=$(LC_ALL=C mkdir "$bg_d" 2>&1); then
	# Only a directory that is there is one that exists: a read-only or
	# full file system is an io error, which says the system's reason.
	if [ -e "$bg_d" ] || [ -L "$bg_d" ]; then bg_err exists "cannot create job directory $bg_d"; fi
	bg_reason "$bg_why"
	bg_err io "cannot create job directory $bg_d${bg_rs:+: $bg_rs}"
fi
# The name index holds the id of the job launched last with the name, the
# one a reference to the name means ("a later job shadows it"): not the
# newest id, which a run --replace, whose id is made before it waits for
# the name's lock and stops the name's jobs, or a caller whose clock is
# ahead, makes another job's. A reader checks the job's meta.json, so a
# stale or torn entry only sends it back to searching.
if [ -n "$bg_name" ]; then
	[ -d "$bg_ws/.names" ] || mkdir "$bg_ws/.names" 2>/dev/null
	printf '%s\n' "$bg_id" >"$bg_ws/.names/$bg_name" 2>/dev/null
fi
# Which setsid runs: command -v names a shell's own (busybox ash runs its
# applets) without a path, and it has no -f (below). The answer goes to
# job.sh, which the wrapper overwrites next: read back without a fork.
bg_ss=
if command -v setsid >"$bg_d/job.sh" 2>/dev/null; then IFS= read -r bg_ss <"$bg_d/job.sh"; fi
# The status records are made now, while there is room: on a full disk
# the wrapper writes its status over exit_code.tmp (bg_exitrec), so a job
# that fills the disk still records how it ended, and so does a stop
# (stop.tmp).
if printf '%s' "$bg_wrapper" >"$bg_d/job.sh" && { [ -z "$bg_script" ] || printf '%s\n' "$bg_script" >"$bg_d/command.sh"; } &&
	printf '   \n' >"$bg_d/exit_code.tmp" &&
	printf '%31s\n' '' >"$bg_d/stop.tmp" &&
	{ [ "$bg_pty" != 1 ] || printf '                                       \n' >"$bg_d/exit_code.pty"; }; then
	:
else
	rm -f "$bg_d/job.sh" "$bg_d/command.sh" "$bg_d/exit_code.tmp" "$bg_d/stop.tmp" "$bg_d/exit_code.pty"
	rmdir "$bg_d" 2>/dev/null
	bg_err io "cannot write the job's files in $bg_ws (is the disk full?)"
fi
if [ "$bg_stdin" = 1 ]; then
	mkfifo -m 600 "$bg_d/stdin" || bg_err io "cannot create the stdin FIFO in $bg_d"
fi
# Start the wrapper in a session of its own. setsid -f runs it from the
# foreground, so it does not inherit the SIGINT and SIGQUIT a
# non-interactive shell ignores for background commands (no shell can
# trap them again, so Ctrl-C and stop -s INT would not reach the job).
# busybox setsid lacks -f: setsid setsid does the same from the
# foreground: the first makes itself a session leader and runs the
# second, which, a group leader, forks: its parent exits at once, its
# child starts the wrapper's session. The wrapper prints
# meta.json's line once its traps are set (from then on a signal to the group
# cannot kill it) and closes the pipe, which is what we wait for. A
# setsid known to lack -f is not tried with it: a process less.
bg_sf=1
case $bg_ss in */* | '') ;; *) bg_sf= ;; esac
if [ -n "$bg_sf" ] && bg_w=$(setsid -f /bin/sh "$bg_d/job.sh" run "$bg_umask" </dev/null 2>/dev/null); then
	:
elif command -v setsid >/dev/null 2>&1; then
	bg_w=$(setsid setsid /bin/sh "$bg_d/job.sh" run "$bg_umask" </dev/null 2>/dev/null)
elif command -v bash >/dev/null 2>&1; then
	bg_w=$(bash -c 'set -m; /bin/sh "$1" run "$2" </dev/null 2>/dev/null &' bash "$bg_d/job.sh" "$bg_umask")
else
	rm -f "$bg_d/job.sh" "$bg_d/command.sh" "$bg_d/exit_code.tmp" "$bg_d/exit_code.pty" "$bg_d/stdin"
	rmdir "$bg_d" 2>/dev/null
	bg_err setsid "the host has neither setsid nor bash to start the job in its own process group"
fi
case $bg_w in
'') bg_err start "the wrapper of job $bg_d did not start" ;;
nometa)
	rm -f "$bg_d/job.sh" "$bg_d/command.sh" "$bg_d/exit_code.tmp" "$bg_d/stop.tmp" "$bg_d/meta.json.tmp" "$bg_d/stdout.log" "$bg_d/stderr.log" "$bg_d/stdin" "$bg_d/stdin.keeper" "$bg_d/exit_code.pty" "$bg_d/terminal" "$bg_d/terminal.tmp"
	rmdir "$bg_d" 2>/dev/null
	bg_err io "cannot write the job's meta.json in $bg_ws (is the disk full?)"
	;;
esac
[ -z "$bg_namelk" ] || rm -rf "$bg_namelk"
# The wrapper reported meta.json's line: when it is small (bg_metasmall),
# bg_metaline takes it from there (bg_mzm) without reading the file.
if [ "$bg_metasmall" = 1 ]; then
	bg_mzput "$bg_d" m
	bg_mzm=$bg_w
fi
bg_obsrec "$bg_d"
