# drain.sh: "job.sh drain STREAM", the --max-log-size drain of a job's
# STREAM (stdout or stderr): the command writes to a pipe, this copies what
# arrives to STREAM.log one read (at most 64 KiB) at a time and, when the
# log holds more than bg_cap bytes not yet dropped, punches a hole
# (fallocate -p) over its older part, keeping the newest bg_cap/2 to bg_cap
# bytes: offsets never change, and STREAM.dropped records how many leading
# bytes are gone. The count is recorded before the hole is punched, so a
# reader that reads it after reading bytes knows which of them were
# intact. A log never holds more than bg_cap + 64 KiB bytes that are not
# dropped. It ignores the signals a stop sends the group: it ends when the
# last writer is gone, so it loses nothing the command wrote.
if [ "${1-}" = drain ]; then
	trap '' TERM INT QUIT HUP USR1 USR2 ALRM
	bg_f=$bg_d/$2.log
	bg_stat=$bg_d/$2.dropped.tmp.dd
	: >"$bg_d/$2.dropped.tmp"
	bg_ok=1
	fallocate -p -o 0 -l 4096 "$bg_d/$2.dropped.tmp" 2>/dev/null || bg_ok=
	rm -f "$bg_d/$2.dropped.tmp"
	bg_dr=0
	if bg_line "$bg_d/$2.dropped"; then bg_dr=${bg_l:-0}; fi
	bg_sz=$(wc -c <"$bg_f")
	while dd bs=65536 count=1 2>"$bg_stat" >>"$bg_f"; do
		IFS= read -r bg_l <"$bg_stat" || break
		case $bg_l in 0+0*) break ;; esac
		# An upper bound; the log's real size is read only near the cap.
		bg_sz=$((bg_sz + 65536))
		if [ -z "$bg_ok" ] || [ $((bg_sz - bg_dr)) -le "$bg_cap" ]; then continue; fi
		bg_sz=$(wc -c <"$bg_f")
		[ $((bg_sz - bg_dr)) -gt "$bg_cap" ] || continue
		bg_new=$(((bg_sz - bg_cap / 2) / 4096 * 4096))
		[ "$bg_new" -gt "$bg_dr" ] || continue
		printf '%s\n' "$bg_new" >"$bg_d/$2.dropped.tmp" && mv -f "$bg_d/$2.dropped.tmp" "$bg_d/$2.dropped"
		fallocate -p -o 0 -l "$bg_new" "$bg_f" 2>/dev/null
		bg_dr=$bg_new
	done
	rm -f "$bg_stat"
	exit 0
fi
