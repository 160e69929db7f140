# prune.sh: the one prune rule (bg_prunable), used by bgjob prune, and
# run's bounded pass over the workspace (bg_autoprune).

# bg_prunable DIR NEWER: succeed when the job in DIR, with NEWER ended jobs
# newer than it, is one that prune removes: it has ended (bg_ended), its
# files are bgjob's (meta.json names the directory, exit_code is a
# number), and by bg_prule: either (bgjob prune) at least bg_keep ended
# jobs are newer (0: no count limit) or it ended (ended_at, else when its
# exit_code was written, else its start for a lost job) more than bg_age seconds (0: no age limit) before bg_nw;
# both (run's pass) each limit that is set holds; all, whatever the
# limits. Whether it still has processes is left to the caller. A
# directory without meta.json (a launch cut short) is prunable once it
# has not changed for a minute (bg_launching). This is the one prune
# rule: bgjob prune and run's pass use it.
bg_prunable() {
	[ ! -L "$1" ] || return 1
	if [ ! -e "$1/meta.json" ]; then
		# A launch cut short, unless it is under way: the wrapper writes
		# meta.json before the command starts, moments after the launch
		# made the directory. What still carries its id the caller finds
		# (bg_busy).
		! bg_launching "$1"
		return
	fi
	bg_ended "$1" || return 1
	bg_meta "$1" || return 1
	bg_ownline "$1" || return 1
	if bg_exit "$1"; then
		bg_l=${bg_xl%"${bg_xl##*[! ]}"}
		case $bg_l in '' | *[!0-9]*) return 1 ;; esac
	fi
	[ "$bg_prule" != all ] || return 0
	bg_pc= bg_pa=
	if [ "$bg_keep" -gt 0 ] && [ "$2" -ge "$bg_keep" ]; then bg_pc=1; fi
	if [ "$bg_age" -gt 0 ]; then
		if bg_rec "$1/ended_at" && bg_epoch "$bg_l"; then
			:
		elif bg_exit "$1" && bg_mtime "$1/exit_code" && bg_epoch "$bg_ts"; then
			:
		else
			bg_epoch "${1##*/}" || return 1
		fi
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
	# A directory without meta.json unchanged for a minute is a launch
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
