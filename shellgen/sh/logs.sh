# logs.sh: print the job bg_ref names: its observation, then for each
# stream of bg_streams (stdout, stderr) its bytes in D records (bg_chunk).
# The range: bg_mode all (the whole log), tail or head (bg_n lines), bytes
# (the last bg_n), offset (from bg_from_stdout, bg_from_stderr) or new
# (what the reader bg_reader has not read, moving its cursor; bg_zero=1 asks
# for an empty range at the end; with bg_n > 0
# only the last bg_n lines of it, the cursor moving to the end). Offset and
# new stop before an incomplete UTF-8 character while the job runs, and on
# a PTY job before an escape sequence cut off (bg_escend). With
# bg_max > 0 the ranges of all streams together hold at most bg_max bytes:
# a range that would be longer is cut (tail and bytes keep its end, from a
# character's first byte; the others its start, before an incomplete UTF-8
# character or escape sequence, but at least one whole) and a Z record
# after its bytes says so. With
# bg_follow=1 it goes on printing what is appended until the job has ended
# and the last bytes are out, then prints the observation again: it looks
# as soon as a log grows or the job's exit_code appears, at most every
# bg_ffloor milliseconds, and every bg_ftick seconds, where the host has
# GNU tail (bg_wakeup); else every tenth of a second. A log found shorter
# than it was, or than the cursor of new, or that no longer holds, before
# where the read had got to, the bytes it held there (the mark: the
# cursor's, bg_mark_STREAM with offset, the follow's own; bg_moved), was
# truncated: it is read again from its start, and a t record says so
# (bg_rewound).
#
# New never moves the cursor over what it sends: the reader reports on
# stdin, in lines "STREAM OFFSET [MARK]", how far the bytes reached their
# own reader (and the mark of the log there, bg_markof), and a committer
# moves the cursor over that, never back, until
# stdin ends. After the last range an A record says so: the reader sends
# its last line and closes stdin, and the script ends. A reader that dies
# ends stdin, so the cursor stays where its last line put it. Before the
# read, bg_commit_stdout and bg_commit_stderr (-1: none) move the cursor
# of the job bg_commit_id the same way (bg_commitmark_STREAM the marks):
# where an earlier read, whose reader reported nothing, was delivered.
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err "$bg_fk" "$bg_ref"
bg_logsok || bg_nolog "$bg_st"
# An ended job's sizes are read at once, by one process (bg_endsizes).
bg_esz_stdout= bg_esz_stderr=
! bg_exit "$bg_d" || bg_endsizes "$bg_d"
# A read does not look at the host's processes: the job's record does not
# count them (the L record is left out), but at the end of a follow.
bg_obsrec "$bg_d" || bg_err notfound "$bg_ref"
bg_left=$bg_max
# A job whose records say it has ended (an exit_code.tmp its wrapper has
# written) is read whole, as an ended job's logs: no more comes from its
# command.
bg_live=0
[ -n "${bg_ox-}" ] || ! bg_running "$bg_d" || bg_live=1
bg_tty=0
bg_ispty "$bg_d" && bg_tty=1
# bg_commit STREAM OFFSET [MARK]: move the reader's cursor of STREAM
# forward to OFFSET, with the mark of the log there, atomically; never
# back. MARK is of the bytes the read delivered: of fewer than 16, and
# starting where the cursor is, it follows on the cursor's mark, which
# comes before it (the last 16 bytes of both).
bg_commit() {
	bg_kf=$bg_d/cursor-$bg_reader.$1
	bg_kc=0 bg_kx=
	if bg_line "$bg_kf"; then
		bg_kc=${bg_l%%[!0-9]*}
		bg_kx=${bg_l#"$bg_kc"}
		bg_kx=${bg_kx# }
	fi
	[ "${bg_kc:-0}" -lt "$2" ] || return 0
	case $bg_kx in *[!0-9a-f]*) bg_kx= ;; esac
	if [ -n "${3-}" ] && [ ${#3} -lt 32 ] && [ $((${bg_kc:-0} + ${#3} / 2)) = "$2" ]; then
		bg_kx=$bg_kx$3
		while [ ${#bg_kx} -gt 32 ]; do bg_kx=${bg_kx#??}; done
	else
		bg_kx=${3-}
	fi
	printf '%s\n' "$2${bg_kx:+ $bg_kx}" >"$bg_kf.tmp" && mv -f "$bg_kf.tmp" "$bg_kf"
}
# bg_commits: move the cursors to the last reports (bg_k_STREAM); fail
# when one could not be written.
bg_commits() {
	bg_kok=0
	for bg_ks in $bg_streams; do
		eval "bg_kv=\${bg_k_$bg_ks-} bg_km=\${bg_km_$bg_ks-}"
		[ -z "$bg_kv" ] || bg_commit "$bg_ks" "$bg_kv" "$bg_km" || bg_kok=1
	done
	return "$bg_kok"
}
if [ "$bg_mode" = new ]; then
	bg_cursorlock "$bg_d/cursor-$bg_reader.lock"
	if [ "${bg_d##*/}" = "$bg_commit_id" ]; then
		for bg_st in $bg_streams; do
			eval "bg_c=\$bg_commit_$bg_st bg_cm=\$bg_commitmark_$bg_st"
			[ "$bg_c" -lt 0 ] || bg_commit "$bg_st" "$bg_c" "$bg_cm"
		done
	fi
	# The committer holds the lock (fd 8, or the lock directory, which
	# names it) until stdin ends, even if this shell dies first. It keeps
	# the reports in variables and writes the cursor at every eighth and
	# when stdin ends (the reader is done or gone), so that it never lags
	# behind a fast reader. Its status is that of the last write.
	exec 3<&0
	{
		bg_kn=0
		while IFS=' ' read -r bg_st bg_c bg_cm; do
			case $bg_st in stdout | stderr) ;; *) continue ;; esac
			case $bg_c in '' | *[!0-9]*) continue ;; esac
			case $bg_cm in *[!0-9a-f]*) bg_cm= ;; esac
			eval "bg_k_$bg_st=\$bg_c bg_km_$bg_st=\$bg_cm"
			bg_kn=$((bg_kn + 1))
			[ $((bg_kn % 8)) != 0 ] || bg_commits
		done
		bg_commits
	} <&3 &
	bg_kp=$!
	exec 3<&-
	if [ -n "$bg_lf" ]; then
		bg_proc "$bg_kp"
		printf '%s %s\n' "$bg_kp" "$bg_s" >"$bg_lf.d/owner"
	fi
fi
for bg_st in $bg_streams; do
	bg_f=$bg_d/$bg_st.log
	# An ended job's log size came with the others (bg_endsizes); else
	# it is read now, after bg_running's look.
	eval "bg_sz=\${bg_esz_$bg_st}"
	[ "$bg_live" = 0 ] && [ -n "$bg_sz" ] || bg_sz=$(exec wc -c <"$bg_f" 2>/dev/null)
	# Removed since the look above: no size to read from.
	[ -n "$bg_sz" ] || bg_nolog "$bg_st"
	bg_to=$bg_sz
	bg_ahead= bg_mark=
	bg_dr=0
	bg_back=0
	if bg_line "$bg_d/$bg_st.dropped"; then bg_dr=${bg_l:-0}; fi
	case $bg_mode in
	# An empty log, or one read from its start, takes fewer processes.
	tail)
		bg_from=0
		[ "$bg_sz" = 0 ] || bg_tailfrom "$bg_f" "$bg_sz" "$bg_n"
		bg_back=1
		;;
	head)
		bg_from=$bg_dr
		if [ "$bg_sz" = "$bg_dr" ]; then
			bg_to=$bg_dr
		elif [ "$bg_dr" = 0 ]; then
			bg_to=$((0 + $(head -n "$bg_n" "$bg_f" | wc -c)))
		else
			bg_to=$((bg_dr + $(tail -c +$((bg_dr + 1)) "$bg_f" | head -n "$bg_n" | wc -c)))
		fi
		;;
	bytes)
		bg_from=$((bg_sz - bg_n))
		bg_back=1
		;;
	offset)
		eval "bg_from=\$bg_from_$bg_st bg_mark=\$bg_mark_$bg_st"
		# The reader's mark of the log at the offset, gone: truncated
		# since; all it holds is new.
		if [ -n "$bg_mark" ] && { [ "$bg_from" -gt "$bg_sz" ] || { [ "$bg_sz" -gt "$bg_from" ] && bg_moved "$bg_f" "$bg_from" "$bg_mark" "$bg_dr"; }; }; then
			bg_rewound "$bg_st" "$bg_sz"
			bg_from=0
		fi
		# Past the end of a running job's log the read waits there (an
		# empty range at the offset), for the bytes from it to come.
		[ "$bg_live" = 0 ] || [ "$bg_from" -le "$bg_sz" ] || bg_ahead=$bg_from
		[ "$bg_live" = 0 ] || bg_utf8end "$bg_f" "$bg_sz" "$bg_from"
		[ "$bg_live$bg_tty" != 11 ] || bg_escend "$bg_f" "$bg_from"
		;;
	new)
		bg_cur=$bg_d/cursor-$bg_reader.$bg_st
		bg_from=0 bg_mark=
		# "OFFSET MARK", or "OFFSET" (a cursor without a mark).
		if bg_line "$bg_cur"; then
			bg_from=${bg_l%%[!0-9]*}
			bg_mark=${bg_l#"$bg_from"}
			bg_mark=${bg_mark# }
			case $bg_mark in *[!0-9a-f]*) bg_mark= ;; esac
		fi
		[ -n "$bg_from" ] || bg_from=0
		# A log shorter than the cursor, or that no longer holds its mark
		# before it (looked at only when there is more to read), was cut
		# (truncated to free the disk, made anew): all it holds now is
		# new. The cursor goes back to its start, under the lock, which
		# bg_commit would not do.
		if [ "$bg_from" -gt "$bg_sz" ] || { [ "$bg_sz" -gt "$bg_from" ] && bg_moved "$bg_f" "$bg_from" "$bg_mark" "$bg_dr"; }; then
			bg_rewound "$bg_st" "$bg_sz"
			bg_from=0
			{ printf '0\n' >"$bg_cur.tmp" && mv -f "$bg_cur.tmp" "$bg_cur"; } 2>/dev/null
		fi
		[ "$bg_live" = 0 ] || bg_utf8end "$bg_f" "$bg_sz" "$bg_from"
		[ "$bg_live$bg_tty" != 11 ] || bg_escend "$bg_f" "$bg_from"
		if [ "$bg_n" -gt 0 ] || [ "$bg_zero" = 1 ]; then
			bg_tl=$bg_from
			bg_tailfrom "$bg_f" "$bg_to" "$bg_n"
			[ "$bg_from" -ge "$bg_tl" ] || bg_from=$bg_tl
			bg_back=1
		fi
		;;
	*) bg_from=0 ;;
	esac
	[ "$bg_from" -ge "$bg_dr" ] || bg_from=$bg_dr
	[ "$bg_to" -le "$bg_sz" ] || bg_to=$bg_sz
	[ "$bg_from" -le "$bg_to" ] || bg_from=$bg_to
	if [ -n "$bg_ahead" ]; then
		bg_from=$bg_ahead bg_to=$bg_ahead bg_ahead=
	fi
	bg_cut=0
	if [ "$bg_max" -gt 0 ] && [ $((bg_to - bg_from)) -gt "$bg_left" ]; then
		bg_cut=1
		if [ "$bg_back" = 1 ]; then
			bg_from=$((bg_to - bg_left))
			# Start at a character: skip the continuation bytes of one the
			# cut split.
			for bg_c in $(tail -c +$((bg_from + 1)) "$bg_f" | head -c 3 | od -An -tu1); do
				if [ "$bg_c" -lt 128 ] || [ "$bg_c" -ge 192 ]; then break; fi
				bg_from=$((bg_from + 1))
			done
		else
			bg_whole=$bg_to
			bg_utf8end "$bg_f" $((bg_from + bg_left)) "$bg_from"
			[ "$bg_to" -ge "$bg_from" ] || bg_to=$bg_from
			if [ "$bg_to" = "$bg_from" ] && [ "$bg_left" -gt 0 ]; then
				# A cap smaller than the next character takes that character
				# whole (at most 3 bytes over), so that every read gets on.
				bg_c=$(tail -c +$((bg_from + 1)) "$bg_f" | head -c 1 | od -An -tu1)
				bg_c=$((${bg_c:-0} + 0))
				bg_need=1
				[ "$bg_c" -lt 192 ] || bg_need=2
				[ "$bg_c" -lt 224 ] || bg_need=3
				[ "$bg_c" -lt 240 ] || bg_need=4
				[ "$bg_c" -lt 248 ] || bg_need=1
				bg_to=$((bg_from + bg_need))
				[ "$bg_to" -le "$bg_whole" ] || bg_to=$bg_whole
				# Still incomplete while the job runs: nothing yet.
				[ "$bg_live" = 0 ] || [ $((bg_to - bg_from)) = "$bg_need" ] || bg_to=$bg_from
			fi
			# Nor an escape sequence, on any job (logs --plain and the MCP
			# server strip them from every log): the cut backs off to its
			# start, or takes one the range starts with whole.
			[ "$bg_to" = "$bg_from" ] || bg_escend "$bg_f" "$bg_from" "$bg_whole"
		fi
	fi
	bg_left=$((bg_left - (bg_to - bg_from)))
	[ "$bg_left" -ge 0 ] || bg_left=0
	if bg_chunk "$bg_st" "$bg_f" "$bg_from" "$bg_to"; then
		[ "$bg_cut" = 0 ] || printf 'Z\t%s\n' "$bg_st"
		eval "bg_off_$bg_st=\$bg_to bg_seen_$bg_st=\$bg_sz"
		# A follow keeps the mark of where it got to (an offset read given
		# one, where it got none further).
		if [ "$bg_follow" = 1 ]; then
			bg_mk=$bg_mark
			[ "$bg_to" = "$bg_from" ] || bg_markof "$bg_f" "$bg_to"
			eval "bg_fm_$bg_st=\$bg_mk"
		fi
	else
		# Truncated under the read (a t record said so): a follow goes
		# on from its start.
		eval "bg_off_$bg_st=0 bg_seen_$bg_st=0 bg_fm_$bg_st="
	fi
done
if [ "$bg_mode" = new ]; then
	printf 'A\tsent\n'
	bg_kok=0
	wait "$bg_kp" || bg_kok=$?
	bg_cursorunlock
	# A cursor that could not be moved (a full disk): the read was
	# delivered, but the next one would send it again. Said, not hidden.
	[ "$bg_kok" = 0 ] || bg_err io "cannot save the read cursor in $bg_d (is the disk full?): the next read with --new sends this output again"
fi
if [ "$bg_follow" = 1 ]; then
	# Print whatever arrives until the job has ended; the sizes are taken
	# after the job is seen to have ended, so its last bytes are drained.
	bg_watchin
	bg_wup= bg_wt=
	while :; do
		bg_ended=1
		bg_running "$bg_d" && bg_ended=0
		bg_live=1
		if ! bg_fsizes; then
			bg_unwatch
			bg_wakedown
			bg_nolog "$bg_st"
		fi
		for bg_st in $bg_streams; do
			bg_f=$bg_d/$bg_st.log
			eval "bg_from=\$bg_off_$bg_st bg_sz=\$bg_sz_$bg_st bg_seen=\$bg_seen_$bg_st bg_mark=\${bg_fm_$bg_st-}"
			bg_dr=0
			if bg_line "$bg_d/$bg_st.dropped"; then bg_dr=${bg_l:-0}; fi
			# Shorter than it was (not an offset past the end of the log,
			# which waits there), or grown again since but without the
			# bytes it had where the follow got to: truncated.
			if [ "$bg_sz" -lt "$bg_seen" ] || { [ "$bg_sz" -gt "$bg_from" ] && bg_moved "$bg_f" "$bg_from" "$bg_mark" "$bg_dr"; }; then
				bg_rewound "$bg_st" "$bg_sz"
				bg_from=0
				eval "bg_off_$bg_st=0 bg_fm_$bg_st="
			fi
			eval "bg_seen_$bg_st=\$bg_sz"
			[ "$bg_dr" -le "$bg_from" ] || bg_from=$bg_dr
			if [ "$bg_sz" -gt "$bg_from" ]; then
				bg_fnew=$((${bg_fnew:-0} + bg_sz - bg_from))
				if bg_chunk "$bg_st" "$bg_f" "$bg_from" "$bg_sz"; then
					bg_markof "$bg_f" "$bg_sz"
					eval "bg_off_$bg_st=\$bg_sz bg_fm_$bg_st=\$bg_mk"
				else
					eval "bg_off_$bg_st=0 bg_seen_$bg_st=0 bg_fm_$bg_st="
				fi
			fi
		done
		[ "$bg_ended" = 1 ] && break
		bg_present
		# The trigger wakes when a log grows or exit_code appears; a job that
		# ended before it started is looked at again at once.
		if [ -z "$bg_wup" ]; then
			bg_wakeup -F "$bg_d/stdout.log" "$bg_d/stderr.log" "$bg_d/exit_code"
			bg_fend=$bg_d/exit_code
			! bg_exit "$bg_d" || continue
		fi
		bg_fnap
	done
	bg_unwatch
	bg_wakedown
	# A job removed while followed is not found.
	bg_obs "$bg_d" || bg_err notfound "$bg_ref"
fi
