# launch.sh: create the job directory, write the wrapper (bg_wrapper) to
# job.sh, start it in a session of its own and write meta.json: bg_meta is
# its JSON up to the fields only the host knows, which are appended here
# with the printf format bg_metafmt (jobdir.MetaProcessFormat).
# Also set: bg_id, bg_name, bg_cwd, bg_stdin, bg_lb. launch_prune.sh may
# follow.
bg_makeroot
if [ -n "$bg_cwd" ] && [ ! -d "$bg_cwd" ]; then bg_err cwd "working directory $bg_cwd does not exist"; fi
[ -d "$bg_ws" ] || mkdir -p "$bg_ws" 2>/dev/null || bg_err io "cannot create workspace directory $bg_ws"
bg_d=$bg_ws/$bg_id
mkdir "$bg_d" 2>/dev/null || bg_err exists "cannot create job directory $bg_d"
# The name index holds the id of the newest job launched with the name. A
# reader checks the job's meta.json, so a stale or torn entry only sends
# it back to searching.
if [ -n "$bg_name" ]; then
	[ -d "$bg_ws/.names" ] || mkdir "$bg_ws/.names" 2>/dev/null
	printf '%s\n' "$bg_id" >"$bg_ws/.names/$bg_name" 2>/dev/null
fi
printf '%s' "$bg_wrapper" >"$bg_d/job.sh"
bg_buf=
if [ "$bg_stdin" = 1 ]; then
	mkfifo -m 600 "$bg_d/stdin" || bg_err io "cannot create the stdin FIFO in $bg_d"
fi
if [ "$bg_lb" = 1 ]; then
	if command -v stdbuf >/dev/null 2>&1; then
		bg_buf=',"buffering":"stdbuf -oL -eL, PYTHONUNBUFFERED=1"'
	else
		bg_buf=',"buffering":"PYTHONUNBUFFERED=1 (the host has no stdbuf)"'
	fi
fi
# Start the wrapper in a session of its own. setsid -f runs it from the
# foreground, so it does not inherit the SIGINT and SIGQUIT a
# non-interactive shell ignores for background commands; busybox setsid
# lacks -f. The wrapper prints its pid once its traps are set (from then on
# a signal to the group cannot kill it) and closes the pipe, which is what
# we wait for.
if bg_w=$(setsid -f /bin/sh "$bg_d/job.sh" </dev/null 2>/dev/null); then
	:
elif command -v setsid >/dev/null 2>&1; then
	bg_w=$(setsid /bin/sh "$bg_d/job.sh" </dev/null 2>/dev/null &)
elif command -v bash >/dev/null 2>&1; then
	bg_w=$(bash -c 'set -m; /bin/sh "$1" </dev/null 2>/dev/null &' bash "$bg_d/job.sh")
else
	rm -f "$bg_d/job.sh"
	rmdir "$bg_d"
	bg_err setsid "the host has neither setsid nor bash to start the job in its own process group"
fi
[ -n "$bg_w" ] || bg_err start "the wrapper of job $bg_d did not start"
bg_s=${bg_w#* }
bg_w=${bg_w%% *}
# shellcheck disable=SC2059 # the format is jobdir.MetaProcessFormat
printf "$bg_metafmt" "$bg_meta" "$bg_buf" "$bg_w" "$bg_w" "$bg_s" "$bg_boot" >"$bg_d/meta.json.tmp"
mv -f "$bg_d/meta.json.tmp" "$bg_d/meta.json"
bg_obs "$bg_d"
