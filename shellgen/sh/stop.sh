# stop.sh: stop the jobs bg_refs names, or with bg_all=1 every job of the
# workspace that has live processes, all at once: signal bg_sig, KILL
# after bg_grace milliseconds, the stop recorded with reason bg_reason
# (stop, session_end). For each, an O record with the
# outcome (stopped, gone, untied) and then its observation.
bg_readroot
bg_sel=
if [ "$bg_all" = 1 ]; then
	bg_mzscan "$bg_ws" './[0-9]*/meta.json'
	for bg_x in "$bg_ws"/[0-9]*; do
		if ! bg_isid "${bg_x##*/}" || [ -L "$bg_x" ] || [ ! -d "$bg_x" ]; then continue; fi
		# One without a meta.json (a launch under way or cut short, a
		# removal under way, a directory this user cannot read) is
		# stopped when processes carry its id: a launch under way has
		# none until its command starts, and is left to its launcher.
		if [ -e "$bg_x/meta.json" ]; then
			bg_busy "$bg_x" || continue
		else
			bg_live "$bg_x"
			[ "$bg_lc" -gt 0 ] || continue
		fi
		bg_sel="$bg_sel$bg_nl$bg_x"
	done
else
	for bg_ref in $bg_refs; do
		if bg_find "$bg_ws" "$bg_ref"; then bg_pickone "$bg_d"; else printf 'E\t%s\t%s\n' "$bg_fk" "$bg_ref"; fi
	done
fi
set -f
IFS=$bg_nl
set -- $bg_sel
IFS=' 	
'
set +f
bg_stop "$bg_sig" "$bg_grace" "$bg_reason" "" "$@"
# Each job is reported with what happened to it; one removed meanwhile (by
# a concurrent rm) is not found, said once.
bg_i=0
for bg_x in "$@"; do
	bg_i=$((bg_i + 1))
	if [ -d "$bg_x" ] && [ ! -L "$bg_x" ]; then
		eval "bg_o=\${bg_oc_$bg_i-}"
		printf 'O\t%s\n' "$bg_o"
		bg_obs "$bg_x" && continue
	fi
	printf 'E\tnotfound\t%s\n' "${bg_x##*/}"
done
