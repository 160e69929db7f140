# status.sh: print the observation of each job bg_refs names (ids or
# names), or an E notfound record.
bg_readroot
# An ended job recorded without leftovers is not scanned for (bg_live).
bg_recorded=1
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref" && bg_obs "$bg_d"; then :; else printf 'E\t%s\t%s\n' "$bg_fk" "$bg_ref"; fi
done
# Record the ended jobs seen without processes (bg_leftovers).
bg_leftovers
