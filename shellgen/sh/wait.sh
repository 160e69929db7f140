# wait.sh: wait until the jobs bg_refs names have ended (exit_code written
# or wrapper gone), or with bg_any=1 one of them, polling on the host, then
# print their observations. bg_limit (tenths of a second by the clock, 0:
# none) gives up with a W timeout record. With bg_once=1 it looks once and, when the jobs
# have not ended, prints W pending instead: the caller's trigger (fsnotify)
# runs it again. It ends early, printing nothing more, when its stdin
# closes (the caller went away).
bg_readroot
bg_dirs=
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_dirs=$bg_dirs$bg_d$bg_nl; else bg_err notfound "$bg_ref"; fi
done
# The directories, whatever characters the root holds, as "$@".
set -f
IFS=$bg_nl
set -- $bg_dirs
IFS=' 	
'
set +f
if [ "$bg_once" != 1 ]; then
	exec 3<&0
	cat <&3 >/dev/null 2>&1 &
	bg_cat=$!
	exec 3<&-
fi
[ "$bg_once" = 1 ] || [ "$bg_limit" -eq 0 ] || bg_deadline "$bg_limit"
while :; do
	bg_left=0 bg_done=0
	for bg_x in "$@"; do
		if bg_running "$bg_x"; then bg_left=$((bg_left + 1)); else bg_done=$((bg_done + 1)); fi
	done
	[ "$bg_left" -eq 0 ] && break
	[ "$bg_any" = 1 ] && [ "$bg_done" -gt 0 ] && break
	if [ "$bg_once" = 1 ]; then
		printf 'W\tpending\n'
		break
	fi
	if [ "$bg_limit" -gt 0 ] && ! bg_intime; then
		printf 'W\ttimeout\n'
		break
	fi
	kill -0 "$bg_cat" 2>/dev/null || {
		kill "$bg_dl" 2>/dev/null
		exit 0
	}
	bg_dlnap
done
[ "$bg_once" = 1 ] || kill "$bg_cat" 2>/dev/null
kill "$bg_dl" 2>/dev/null
for bg_x in "$@"; do bg_obs "$bg_x"; done
