# watch.sh: the trigger of a follow of events on a host reached through a
# runtime that sees no file event (SSH, a container): print a W changed
# record each time the jobs the follow looks at may have changed, the
# first at once, and nothing else; the caller looks again (Status, List)
# at each, as it does at a file event on its own machine. A change is a
# job directory made or removed, and for a job not ended, a file of its
# events appearing (meta.json, started_at, ready_at, stop, not_run,
# exit_code) or, looked at every bg_wlive seconds, its wrapper gone
# without writing one. The jobs are those bg_refs names (found once), or
# without refs the workspace's, with bg_allws=1 every workspace's. Between
# its looks it naps as a wait does (bg_fnap): where the host has GNU tail,
# woken as soon as one of those files appears, and every bg_ftick
# seconds (a job made: no file names it before); elsewhere every tenth of
# a second. It runs until its stdin closes (bg_watchin).
bg_readroot
bg_dirs=
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_dirs=$bg_dirs$bg_d$bg_nl; fi
done
# bg_wsig DIR...: set bg_sig to what a look would find changed in the job
# directories DIR (their names, and for each job not ended the files of
# its events there; bg_wgone, its wrappers found gone, is added by the
# caller) and bg_wnew to the files the trigger watches for: those of the
# jobs not ended that are not there yet, one a line. A glob that matched
# nothing is no directory.
bg_wsig() {
	bg_sig= bg_wnew= bg_wrun=
	for bg_x in "$@"; do
		if [ ! -d "$bg_x" ] || [ -L "$bg_x" ]; then continue; fi
		bg_sig=$bg_sig$bg_nl${bg_x##*/}
		# An exit_code counts once whole (bg_exit): one still being
		# written is a file seen, and its last byte a change.
		if bg_exit "$bg_x"; then
			bg_sig="$bg_sig exit_code"
			continue
		fi
		for bg_y in meta.json started_at ready_at stop not_run exit_code; do
			if [ -e "$bg_x/$bg_y" ]; then bg_sig="$bg_sig $bg_y"; else bg_wnew=$bg_wnew$bg_nl$bg_x/$bg_y; fi
		done
		bg_wrun=$bg_wrun$bg_x$bg_nl
	done
}
# bg_wlost DIR...: set bg_wgone to those of DIR whose wrapper is gone
# (bg_running fails) though their meta.json is there.
bg_wlost() {
	bg_wgone=
	for bg_x in "$@"; do
		if [ -e "$bg_x/meta.json" ] && ! bg_running "$bg_x"; then bg_wgone=$bg_wgone$bg_nl${bg_x##*/}; fi
	done
}
bg_watchin
bg_dl= bg_wt= bg_wup= bg_last=- bg_wkey=- bg_wgone= bg_wat=
while :; do
	if [ -n "$bg_refs" ]; then
		set -f
		IFS=$bg_nl
		# shellcheck disable=SC2086 # one directory a line
		set -- $bg_dirs
		IFS=' 	
'
		set +f
	elif [ "$bg_allws" = 1 ]; then
		set -- "$bg_root"/*/[0-9]*
	else
		set -- "$bg_ws"/[0-9]*
	fi
	bg_wsig "$@"
	# The wrappers of the jobs not ended, every bg_wlive seconds by the
	# host's uptime (without one, at every look).
	if ! bg_uptime || [ -z "$bg_wat" ] || [ $((bg_up - bg_wat)) -ge $((bg_wlive * 1000)) ]; then
		bg_wat=${bg_up:-0}
		set -f
		IFS=$bg_nl
		# shellcheck disable=SC2086 # one directory a line
		set -- $bg_wrun
		IFS=' 	
'
		set +f
		bg_wlost "$@"
	fi
	bg_sig=$bg_sig$bg_nl-$bg_wgone
	if [ "$bg_sig" != "$bg_last" ]; then
		bg_last=$bg_sig
		printf 'W\tchanged\n'
	fi
	bg_present
	# The files watched change: the trigger watches the new ones, then
	# the look comes again at once, for what appeared before it did. The
	# root's mark stays where it is: tail needs a file.
	if [ "$bg_wnew" != "$bg_wkey" ]; then
		bg_wkey=$bg_wnew
		set -f
		IFS=$bg_nl
		# shellcheck disable=SC2086 # one file a line
		set -- "$bg_root/.bgjob-root" $bg_wnew
		IFS=' 	
'
		set +f
		if [ -z "$bg_wup" ]; then bg_wakeup -F "$@"; else bg_wakeon "$@"; fi
		continue
	fi
	bg_fnap
done
