# prune.sh: remove the workspace's jobs that bg_prunable selects (bg_keep,
# bg_age), newest first, and that have no live process: for each, its
# observation, and later an R record (or E, when it could not be removed); with
# bg_dry=1 only the observations. A job the rule selects that still has
# live processes stays: a K record, then its observation (without a
# meta.json, a launch cut short: the unreadable job's). The removals come
# last, all at once: the R records follow all the observations.
bg_readroot
bg_now
bg_mzscan "$bg_ws" './[0-9]*/meta.json'
set -- "$bg_ws"/[0-9]*
bg_pi=$#
bg_pos=0 bg_pl=
while [ "$bg_pi" -gt 0 ]; do
	eval "bg_x=\${$bg_pi}"
	bg_pi=$((bg_pi - 1))
	if [ ! -d "$bg_x" ] || [ -L "$bg_x" ] || ! bg_isid "${bg_x##*/}"; then continue; fi
	bg_strict=
	[ ! -e "$bg_x/meta.json" ] || bg_strict=strict
	if bg_prunable "$bg_x" "$bg_pos"; then
		if bg_busy "$bg_x"; then
			# Kept: the job has ended, but some of its processes have not.
			bg_esc "$bg_x"
			printf 'K\tlive\t%s\n' "$bg_e"
			bg_obs "$bg_x" $bg_strict
			bg_pos=$((bg_pos + 1))
			continue
		fi
		# A job another prune is removing is that prune's to report.
		bg_obs "$bg_x" $bg_strict || continue
		bg_pl=$bg_pl$bg_nl$bg_x
	elif bg_ended "$bg_x"; then
		bg_pos=$((bg_pos + 1))
	fi
done
# All at once (bg_rm): after the observations, the R records.
if [ "$bg_dry" != 1 ] && [ -n "$bg_pl" ]; then
	set -f
	IFS=$bg_nl
	set -- $bg_pl
	IFS=' 	
'
	set +f
	bg_rm "$@"
fi
