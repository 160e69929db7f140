# launch_replace.sh: before launch.sh when the job has a name (bg_name)
# and is run with --replace: the bg_samename that launch.sh calls before
# it makes the job's directory. Every job of the workspace with that name
# and live processes (bg_busy: a running wrapper, or processes left
# behind), and the job the name index names if its meta.json is missing
# or damaged, is stopped as bgjob stop does, all at once (TERM, KILL after
# bg_rgrace milliseconds, then wait until their processes are gone,
# so that what they held, such as a port, is free): for each an H replaced
# record and its observation. Runs with --replace of one name take turns:
# the lock .names/.lock.NAME (bg_namelk), a directory holding its holder's
# pid and start time, is held from before the stop until the new job runs
# (launch.sh lets go of it then), so the next one stops it in turn; a lock
# whose holder is gone is taken over. A run whose caller went away (killed
# while it waited for the lock, say) ends where it is (bg_watchin), so it
# never stops the job of a run that came after it; launch.sh stops the
# watch before it makes the job's directory.
bg_samename() {
	# No clock of a wait yet, for bg_unwatch (not one from the caller's
	# environment).
	bg_dl=
	bg_watchin
	bg_namelock
	# The jobs of the name, one meta.json per line, then those with live
	# processes.
	bg_nsel=$(bg_metagrep "$bg_ws" "\"name\":\"$bg_name\"")
	set -f
	IFS=$bg_nl
	set -- $bg_nsel
	IFS=' 	
'
	set +f
	bg_nsel=
	# The sizes of their meta.json with one find, not one each.
	[ $# -lt 2 ] || bg_mzscan "$bg_ws" './[0-9]*/meta.json'
	for bg_nx in "$@"; do
		bg_nx=${bg_nx%/meta.json}
		if bg_isid "${bg_nx##*/}" && [ ! -L "$bg_nx" ] && bg_busy "$bg_nx"; then bg_nsel="$bg_nsel$bg_nl$bg_nx"; fi
	done
	# The job the name index names (the newest of the name) is the name's
	# even when its meta.json cannot say so (missing or damaged): what its
	# processes hold, the new job may need.
	if bg_line "$bg_ws/.names/$bg_name" && bg_isid "$bg_l"; then
		bg_nx=$bg_ws/$bg_l
		case "$bg_nsel$bg_nl" in *"$bg_nl$bg_nx$bg_nl"*) ;; *)
			if { ! bg_metaline "$bg_nx" || ! bg_ownline "$bg_nx"; } && [ -d "$bg_nx" ] && [ ! -L "$bg_nx" ] && bg_busy "$bg_nx"; then bg_nsel="$bg_nsel$bg_nl$bg_nx"; fi
			;;
		esac
	fi
	# The new job is not in that find's: its size is the launcher's.
	bg_mzs=
	[ -n "$bg_nsel" ] || return 0
	set -f
	IFS=$bg_nl
	set -- $bg_nsel
	IFS=' 	
'
	set +f
	bg_stop TERM "$bg_rgrace" stop "" "$@"
	for bg_nx in "$@"; do
		bg_esc "$bg_nx"
		printf 'H\treplaced\t%s\n' "$bg_e"
		bg_nm=
		[ ! -e "$bg_nx/meta.json" ] || bg_nm=strict
		bg_obs "$bg_nx" $bg_nm || :
	done
}

# bg_namelock: take the lock of bg_name's --replace runs (bg_namelk,
# bg_dirlock), waiting for bg_rgrace milliseconds and 30 s more, counted
# in naps of a tenth of a second (a holder stops the jobs of the name,
# then launches), or end the script with an E namebusy record (io when
# the lock cannot be made at all).
bg_namelock() {
	[ -d "$bg_ws/.names" ] || mkdir "$bg_ws/.names" 2>/dev/null
	bg_nk=$bg_ws/.names/.lock.$bg_name
	bg_proc $$
	bg_dirlock "$bg_nk" "$$ $bg_s" $(((bg_rgrace + 99) / 100 + 300))
	case $? in
	0) ;;
	2) bg_err io "cannot create the lock of name $bg_name in $bg_ws/.names (is the file system read-only or full?)" ;;
	*) bg_err namebusy "$bg_name" ;;
	esac
	bg_namelk=$bg_nk
}
