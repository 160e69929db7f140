# rm.sh: remove the jobs bg_refs names and the job directories bg_dirs
# (one per line, as earlier observations reported them): an R record for
# each removed, E records for refusals. A job with live processes is
# refused unless bg_force=1, which stops it first (KILL after bg_grace
# milliseconds); all such jobs are stopped at once.
bg_readroot
# All the references are found before any job is removed: a name then
# means the job it named, not an older one of the name once that is gone.
bg_sel=
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_pickone "$bg_d"; else printf 'E\t%s\t%s\n' "$bg_fk" "$bg_ref"; fi
done
set -f
IFS=$bg_nl
set -- $bg_sel $bg_dirs
IFS=' 	
'
set +f
# The sizes of the workspace's meta.json files, with one find for all the
# jobs rather than one each.
[ $# -le 1 ] || bg_mzscan "$bg_ws" './[0-9]*/meta.json'
# bg_rmforce DIR...: stop those of the DIRs that have live processes
# (bg_rs_N set for the Nth), all at once.
bg_rmforce() {
	bg_rsl= bg_i=0
	for bg_x in "$@"; do
		bg_i=$((bg_i + 1))
		if [ -d "$bg_x" ] && [ ! -L "$bg_x" ] && bg_busy "$bg_x"; then
			bg_rsl=$bg_rsl$bg_nl$bg_x
			# Its wrapper will have written its end: no launch under way.
			eval "bg_rs_$bg_i=1"
		fi
	done
	[ -n "$bg_rsl" ] || return 0
	set -f
	IFS=$bg_nl
	set -- $bg_rsl
	IFS=' 	
'
	set +f
	bg_stop TERM "$bg_grace" stop "" "$@"
}
[ "$bg_force" != 1 ] || bg_rmforce "$@"
[ $# = 0 ] || bg_rm "$@"
