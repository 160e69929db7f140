# timer.sh: "job.sh timer PID", the --timeout timer of the job whose
# wrapper is PID: after bg_timeout seconds stop the job as bgjob stop would
# (TERM, KILL after bg_grace tenths of a second), unless the wrapper ends
# the timer first (TERM while it sleeps). It sleeps a second at a time and
# ends as soon as the wrapper is gone (a job killed without a trace), so no
# timer outlives its job.
if [ "${1-}" = timer ]; then
	bg_tw=$2
	bg_boot=
	if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
	bg_term=
	trap 'bg_term=1' TERM
	bg_tn=${bg_timeout%%.*}
	bg_tf=
	case $bg_timeout in *.*) bg_tf=0.${bg_timeout#*.} ;; esac
	bg_ti=0
	while [ "$bg_ti" -lt "${bg_tn:-0}" ] || [ -n "$bg_tf" ]; do
		if [ "$bg_ti" -lt "${bg_tn:-0}" ]; then
			sleep 1 &
			bg_ti=$((bg_ti + 1))
		else
			sleep "$bg_tf" &
			bg_tf=
		fi
		bg_t=$!
		[ -n "$bg_term" ] || wait "$bg_t"
		if [ -n "$bg_term" ]; then
			kill "$bg_t" 2>/dev/null
			exit 0
		fi
		bg_proc "$bg_tw"
		[ -n "$bg_s" ] || exit 0
	done
	trap : TERM INT QUIT
	bg_stop TERM "$bg_grace" timeout nowait "$bg_d"
	exit 0
fi
