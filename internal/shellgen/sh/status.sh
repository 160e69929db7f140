# status.sh: print the observation of each job bg_refs names (ids or
# names), or an E notfound record.
bg_readroot
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref" && bg_obs "$bg_d"; then :; else printf 'E\t%s\t%s\n' "$bg_fk" "$bg_ref"; fi
done
