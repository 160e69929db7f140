# ready.sh: record that a line of the output of the job bg_ref names
# matched its readiness pattern (run --ready): bg_at, the time the reader
# saw it by its own clock, goes into the job's ready_at file, unless one
# is there already (the first readiness stands). Then print the job's
# observation (its processes not counted).
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err "$bg_fk" "$bg_ref"
if [ ! -e "$bg_d/ready_at" ]; then
	{ printf '%s\n' "$bg_at" >"$bg_d/ready_at.tmp" && mv -f "$bg_d/ready_at.tmp" "$bg_d/ready_at"; } 2>/dev/null ||
		bg_err io "cannot write the ready_at file of job $bg_ref"
fi
bg_obsrec "$bg_d" || bg_err notfound "$bg_ref"
