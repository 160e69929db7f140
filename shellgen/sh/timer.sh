# timer.sh: "job.sh timer", the --timeout timer: after bg_timeout seconds
# stop the job as bgjob stop would (TERM, KILL after bg_grace tenths of a
# second), unless the wrapper ends the timer first (TERM while it sleeps).
if [ "${1-}" = timer ]; then
	bg_boot=
	if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
	bg_term=
	trap 'bg_term=1' TERM
	sleep "$bg_timeout" &
	bg_t=$!
	[ -n "$bg_term" ] || wait "$bg_t"
	if [ -n "$bg_term" ]; then
		kill "$bg_t" 2>/dev/null
		exit 0
	fi
	trap : TERM INT QUIT
	bg_stop "$bg_d" TERM "$bg_grace" timeout $$ nowait
	exit 0
fi
