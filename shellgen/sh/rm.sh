# rm.sh: remove the jobs bg_refs names and the job directories bg_dirs
# (one per line, as earlier observations reported them): an R record for
# each removed, E records for refusals. A job with live processes is
# refused unless bg_force=1, which stops it first (KILL after bg_grace
# milliseconds).
bg_readroot
bg_rmone() {
	bg_rmstopped=
	if [ "$bg_force" = 1 ] && [ -d "$1" ] && [ ! -L "$1" ] && bg_busy "$1"; then
		bg_stop TERM "$bg_grace" stop "" "$1"
		# Its wrapper has just written its end: no launch under way.
		bg_rmstopped=1
	fi
	bg_rm "$1"
}
# All the references are found before any job is removed: a name then
# means the job it named, not an older one of the name once that is gone.
bg_sel=
for bg_ref in $bg_refs; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_pickone "$bg_d"; else printf 'E\t%s\t%s\n' "$bg_fk" "$bg_ref"; fi
done
set -f
IFS=$bg_nl
set -- $bg_sel
IFS=' 	
'
set +f
for bg_x in "$@"; do bg_rmone "$bg_x"; done
set -f
IFS=$bg_nl
set -- $bg_dirs
IFS=' 	
'
set +f
for bg_x in "$@"; do bg_rmone "$bg_x"; done
