# launch_replace.sh: before launch.sh when the job has a name (bg_name)
# and is run with --replace: the bg_samename that launch.sh calls before
# it makes the job's directory. Every job of the workspace with that name
# and live processes (bg_busy: a running wrapper, or processes left
# behind) is stopped as bgjob stop does, all at once (TERM, KILL after
# bg_rgrace milliseconds, then wait until their processes are gone,
# so that what they held, such as a port, is free): for each an H replaced
# record and its observation. Runs with --replace of one name take turns:
# the lock .names/.lock.NAME (bg_namelk), a directory holding its holder's
# pid and start time, is held from before the stop until the new job runs
# (launch.sh lets go of it then), so the next one stops it in turn; a lock
# whose holder is gone is taken over.
bg_samename() {
	bg_namelock
	# The jobs of the name, one meta.json per line, then those with live
	# processes.
	bg_nsel=$(printf '%s\0' "$bg_ws"/[0-9]*/meta.json | xargs -0 grep -l -F -e "\"name\":\"$bg_name\"" 2>/dev/null)
	set -f
	IFS=$bg_nl
	set -- $bg_nsel
	IFS=' 	
'
	set +f
	bg_nsel=
	for bg_nx in "$@"; do
		bg_nx=${bg_nx%/meta.json}
		if bg_isid "${bg_nx##*/}" && [ ! -L "$bg_nx" ] && bg_busy "$bg_nx"; then bg_nsel="$bg_nsel$bg_nl$bg_nx"; fi
	done
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
		bg_obs "$bg_nx" strict || :
	done
}

# bg_namelock: take the lock of bg_name's --replace runs (bg_namelk),
# waiting for bg_rgrace milliseconds and 30 s more, counted in naps of a
# tenth of a second (a holder stops the jobs of the name, then launches),
# or end the script with an E namebusy record. A lock whose holder is gone is taken over in place (its
# owner file renamed away, then written anew); one that has had no holder
# for 2 s (one killed between its mkdir and its write) is removed and made
# again. An owner file still empty (its holder between opening and writing
# it) names no holder yet.
bg_namelock() {
	[ -d "$bg_ws/.names" ] || mkdir "$bg_ws/.names" 2>/dev/null
	bg_nk=$bg_ws/.names/.lock.$bg_name
	bg_proc $$
	bg_nown="$$ $bg_s"
	bg_ni=0 bg_nno=0
	until mkdir "$bg_nk" 2>/dev/null; do
		if bg_line "$bg_nk/owner" && [ -n "$bg_l" ]; then
			bg_nno=0
			bg_proc "${bg_l%% *}"
			if [ -z "$bg_s" ] || [ "$bg_s" != "${bg_l#* }" ]; then
				# Its holder is gone: take the lock over where it is, never
				# removing it, since another run may have taken it over
				# since we read it. Of those that judge it so at once, one
				# renames the owner file away and finds it unchanged; the
				# others find it gone, or find the new owner in what they
				# renamed and put it back.
				bg_nold=$bg_l
				if mv "$bg_nk/owner" "$bg_nk/owner.$$" 2>/dev/null; then
					bg_line "$bg_nk/owner.$$"
					if [ "$bg_l" = "$bg_nold" ]; then
						rm -f "$bg_nk/owner.$$"
						break
					fi
					mv "$bg_nk/owner.$$" "$bg_nk/owner" 2>/dev/null
				fi
				continue
			fi
		else
			bg_nno=$((bg_nno + 1))
			if [ "$bg_nno" -ge 20 ]; then
				rm -rf "$bg_nk"
				bg_nno=0
				continue
			fi
		fi
		bg_ni=$((bg_ni + 1))
		[ "$bg_ni" -lt $(((bg_rgrace + 99) / 100 + 300)) ] || bg_err namebusy "$bg_name"
		bg_nap
	done
	printf '%s\n' "$bg_nown" >"$bg_nk/owner"
	bg_namelk=$bg_nk
}
