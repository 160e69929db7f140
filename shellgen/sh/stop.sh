# stop.sh: stop the jobs bg_refs names, or with bg_all=1 every job of the
# workspace that has live processes: signal bg_sig, KILL after bg_grace
# tenths of a second. For each, an O record with the outcome (stopped,
# gone, untied) and then its observation.
bg_readroot
# bg_stopone DIR REF: stop the job in DIR and report it; a job removed
# meanwhile (by a concurrent rm) is not found, said once.
bg_stopone() {
	bg_stop "$1" "$bg_sig" "$bg_grace" stop $$
	if [ -e "$1/meta.json" ]; then
		printf 'O\t%s\n' "$bg_o"
		bg_obs "$1" && return 0
	fi
	printf 'E\tnotfound\t%s\n' "$2"
}
if [ "$bg_all" = 1 ]; then
	for bg_x in "$bg_ws"/[0-9]*; do
		if ! bg_isid "${bg_x##*/}" || [ ! -e "$bg_x/meta.json" ]; then continue; fi
		if bg_busy "$bg_x"; then bg_stopone "$bg_x" "${bg_x##*/}"; fi
	done
else
	for bg_ref in $bg_refs; do
		if bg_find "$bg_ws" "$bg_ref"; then bg_stopone "$bg_d" "$bg_ref"; else printf 'E\tnotfound\t%s\n' "$bg_ref"; fi
	done
fi
