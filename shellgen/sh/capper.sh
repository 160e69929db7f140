# capper.sh: "job.sh capper PID", the --max-log-size capper of the job
# whose wrapper is PID.
if [ "${1-}" = capper ]; then
	# Keep each log's newest bg_cap/2 to bg_cap bytes on disk: punch a
	# hole (fallocate -p) over the older part, so offsets never change,
	# and record in STREAM.dropped how many leading bytes are gone. The
	# count is recorded before the hole is punched, so a reader that reads
	# it after reading bytes knows which of them were intact.
	bg_cw=$2
	trap 'exit 0' TERM
	: >"$bg_d/stdout.dropped.tmp"
	bg_ok=1
	fallocate -p -o 0 -l 4096 "$bg_d/stdout.dropped.tmp" 2>/dev/null || bg_ok=
	rm -f "$bg_d/stdout.dropped.tmp"
	[ -n "$bg_ok" ] || exit 0
	while :; do
		bg_proc "$bg_cw"
		[ -n "$bg_s" ] || exit 0
		for bg_cf in stdout stderr; do
			bg_sz=$(wc -c <"$bg_d/$bg_cf.log")
			bg_dr=0
			if bg_line "$bg_d/$bg_cf.dropped"; then bg_dr=${bg_l:-0}; fi
			[ $((bg_sz - bg_dr)) -gt "$bg_cap" ] || continue
			bg_new=$(((bg_sz - bg_cap / 2) / 4096 * 4096))
			[ "$bg_new" -gt "$bg_dr" ] || continue
			printf '%s\n' "$bg_new" >"$bg_d/$bg_cf.dropped.tmp" && mv -f "$bg_d/$bg_cf.dropped.tmp" "$bg_d/$bg_cf.dropped"
			fallocate -p -o 0 -l "$bg_new" "$bg_d/$bg_cf.log" 2>/dev/null
		done
		sleep 1
	done
fi
