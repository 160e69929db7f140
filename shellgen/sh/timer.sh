# timer.sh: "job.sh timer PID", the --timeout timer of the job whose
# wrapper is PID: after bg_timeout milliseconds stop the job as bgjob stop
# would (TERM, KILL after bg_grace milliseconds), unless the wrapper ends
# the timer first (TERM while it sleeps). One sleep of the whole timeout
# measures the time and wakes the timer with USR1; meanwhile the timer
# looks once a second whether the wrapper is gone (a job killed without a
# trace) and then ends, with its sleep, so no timer outlives its job.
if [ "${1-}" = timer ]; then
	bg_tw=$2
	bg_boot=
	if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
	bg_term= bg_fire=
	trap 'bg_term=1' TERM
	trap 'bg_fire=1' USR1
	bg_me=$$
	bg_secs "$bg_timeout"
	# Where there is no setsid nothing ends this sleep with the timer: at
	# the timeout the timer may be long gone and its pid another
	# process's, which USR1 would end (bg_ours).
	bg_proc "$bg_me"
	bg_mst=$bg_s
	sleep "$bg_sec" && bg_ours "$bg_me" "$bg_mst" && kill -s USR1 "$bg_me" &
	while [ -z "$bg_fire" ]; do
		sleep 1 &
		bg_t=$!
		[ -n "$bg_term$bg_fire" ] || wait "$bg_t"
		kill "$bg_t" 2>/dev/null
		[ -z "$bg_fire" ] || break
		bg_proc "$bg_tw"
		if [ -n "$bg_term" ] || [ -z "$bg_s" ]; then
			# Ended by the wrapper, or the job is gone: end the sleep too
			# (the timer leads its own process group where setsid exists).
			trap '' TERM
			kill -s TERM -- "-$bg_me" 2>/dev/null
			exit 0
		fi
	done
	trap : TERM INT QUIT
	bg_stop TERM "$bg_grace" timeout nowait "$bg_d"
	exit 0
fi
