# wait.sh: wait until the jobs bg_refs names have ended (exit_code written
# or wrapper gone), or with bg_any=1 one of them, polling on the host, then
# print their observations. bg_limit (milliseconds, 0: none; by the
# clock, however long each look takes) gives up with a W timeout record.
# With bg_once=1 it looks once and, when the jobs have not ended, prints W
# pending instead: the caller's trigger (fsnotify) runs it again. When its
# stdin closes (the caller went away) it ends at once, printing nothing
# more, and so does every process it started (bg_watchin).
bg_readroot
# An ended job recorded without leftovers is not scanned for (bg_live).
bg_recorded=1
bg_dirs=
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_dirs=$bg_dirs$bg_d$bg_nl; else bg_err "$bg_fk" "$bg_ref"; fi
done
# The directories, whatever characters the root holds, as "$@".
set -f
IFS=$bg_nl
set -- $bg_dirs
IFS=' 	
'
set +f
# bg_wakeexit DIR...: bg_wakeup by name on the exit_code of each DIR: a
# wait looks when one appears, and every bg_ftick seconds (a job whose
# wrapper died writes none).
bg_wakeexit() {
	for bg_x in "$@"; do
		set -- "$@" "$bg_x/exit_code"
		shift
	done
	bg_wakeup -F "$@"
}
bg_dl= bg_wt= bg_wup=
if [ "$bg_once" != 1 ]; then
	bg_watchin
	[ "$bg_limit" -eq 0 ] || bg_deadline "$bg_limit"
fi
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
	bg_present
	[ -n "$bg_wup" ] || bg_wakeexit "$@"
	bg_fnap
done
if [ "$bg_once" != 1 ]; then
	bg_unwatch
	bg_wakedown
fi
# A job removed while waited on is not found, as it would be now.
for bg_x in "$@"; do bg_obs "$bg_x" || printf 'E\tnotfound\t%s\n' "${bg_x##*/}"; done
# Record the ended jobs seen without processes (bg_leftovers).
bg_leftovers
