# wait_for.sh: wait until a line of the logs bg_streams (stdout, stderr) of
# the job bg_ref names matches bg_re, a POSIX extended regular expression
# matched by the host's grep -E, byte by byte (the C locale). Each log is
# read from bg_from_stdout, bg_from_stderr (bg_mark_STREAM: the mark of
# the log there, bg_markof, or ""); while the job runs only whole
# lines are matched (the last one may go on). On a PTY job (meta.json's
# "pty":true) the line being written is matched too, as it stands (a
# prompt ends without a newline), and what is matched is the text of the
# terminal's lines (bg_screen): without escape sequences and CRs (a
# terminal ends its lines with CR LF). The first matching line goes
# out in D records (64 KiB at most, then a Z), then the observation. When the
# job ends first: W ended; after bg_limit milliseconds (0: never; by
# the clock, however long each look takes): W timeout; with bg_once=1,
# looking once: F records with the offset each log was read to (and the
# mark there) and W
# pending (the caller's trigger runs it again from there). When its stdin
# closes it ends at once, printing nothing more, and so does every process
# it started, a slow grep too (bg_watchin). It looks again as soon as a log
# grows or the job's exit_code appears, at most every bg_ffloor
# milliseconds, and every bg_ftick seconds, where the host has GNU tail
# (bg_wakeup); else every tenth of a second. A log found shorter than what
# was read of it, or that no longer holds the bytes it held where the read
# got to (bg_moved), was truncated: it is read again from its start, and a
# t record says so (bg_rewound).
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err "$bg_fk" "$bg_ref"
# grep exits 2 on an expression it cannot compile.
bg_rc=0
printf 'x\n' | LC_ALL=C grep -E -e "$bg_re" >/dev/null 2>&1 || bg_rc=$?
[ "$bg_rc" -lt 2 ] || bg_err regex "$bg_re"
# -a (where grep has it) matches lines that hold NUL bytes too.
bg_ga=-E
if printf 'x\n' | grep -a x >/dev/null 2>&1; then bg_ga=-aE; fi
bg_tty=0
if bg_ispty "$bg_d"; then
	bg_tty=1
	bg_screenexp
fi
bg_dl= bg_wt= bg_wup=
if [ "$bg_once" != 1 ]; then
	bg_watchin
	[ "$bg_limit" -eq 0 ] || bg_deadline "$bg_limit"
fi
# bg_matched FROM COUNT: the bytes of bg_f as matched, on a PTY job the
# text of its lines.
bg_matched() {
	if [ "$bg_tty" = 1 ]; then
		bg_range "$bg_f" "$1" "$2" | bg_screen
	else
		bg_range "$bg_f" "$1" "$2"
	fi
}
bg_state=
while :; do
	# The sizes are taken after the job is seen to have ended, so its last
	# bytes are matched.
	bg_ended=1
	bg_running "$bg_d" && bg_ended=0
	bg_live=$((1 - bg_ended))
	if ! bg_fsizes; then
		if [ "$bg_once" != 1 ]; then
			bg_unwatch
			bg_wakedown
		fi
		bg_nolog "$bg_st"
	fi
	for bg_st in $bg_streams; do
		bg_f=$bg_d/$bg_st.log
		eval "bg_from=\$bg_from_$bg_st bg_sz=\$bg_sz_$bg_st bg_mark=\$bg_mark_$bg_st"
		bg_dr=0
		if bg_line "$bg_d/$bg_st.dropped"; then bg_dr=${bg_l:-0}; fi
		# Shorter than what was read of it, or grown again since without
		# the bytes it had there: truncated; read from its start.
		if [ "$bg_sz" -lt "$bg_from" ] || { [ "$bg_sz" -gt "$bg_from" ] && bg_moved "$bg_f" "$bg_from" "$bg_mark" "$bg_dr"; }; then
			bg_rewound "$bg_st" "$bg_sz"
			bg_from=0
			eval "bg_from_$bg_st=0 bg_mark_$bg_st="
		fi
		[ "$bg_dr" -le "$bg_from" ] || bg_from=$bg_dr
		[ "$bg_sz" -gt "$bg_from" ] || continue
		bg_fnew=$((${bg_fnew:-0} + bg_sz - bg_from))
		bg_to=$bg_sz
		# While the job runs only whole lines are matched: the range ends
		# after its last newline, found only when it does not end in one.
		bg_c=10
		[ "$bg_ended" = 1 ] || bg_c=$(od -An -tu1 -j $((bg_sz - 1)) -N 1 "$bg_f" 2>/dev/null)
		if [ "$bg_ended" = 0 ] && [ $((${bg_c:-0} + 0)) != 10 ]; then
			bg_ln=$(tail -c +$((bg_from + 1)) "$bg_f" | head -c $((bg_sz - bg_from)) | wc -l)
			bg_to=$((bg_from + $(tail -c +$((bg_from + 1)) "$bg_f" | head -n "$bg_ln" | wc -c)))
		fi
		# bg_mt: the end of what is matched; bg_to: of the whole lines.
		bg_mt=$bg_to
		[ "$bg_tty" = 0 ] || bg_mt=$bg_sz
		[ "$bg_mt" -gt "$bg_from" ] || continue
		# A look asks grep whether a line matches (-q: no output, a process
		# each for dd and grep); only a match asks which.
		bg_m=
		if bg_matched "$bg_from" $((bg_mt - bg_from)) | LC_ALL=C grep -q "$bg_ga" -e "$bg_re"; then
			bg_m=$(bg_matched "$bg_from" $((bg_mt - bg_from)) | LC_ALL=C grep -n "$bg_ga" -e "$bg_re" | head -n 1 | cut -d: -f1)
		fi
		if [ -n "$bg_m" ]; then
			bg_s=$((bg_from + $(tail -c +$((bg_from + 1)) "$bg_f" | head -n $((bg_m - 1)) | wc -c)))
			bg_e=$((bg_from + $(tail -c +$((bg_from + 1)) "$bg_f" | head -n "$bg_m" | wc -c)))
			[ "$bg_e" -le "$bg_mt" ] || bg_e=$bg_mt
			bg_cut=0
			if [ $((bg_e - bg_s)) -gt 65536 ]; then
				# A longer line goes out cut to 64 KiB, marked (Z): the part
				# that ends 1 KiB after the match where grep says where the
				# match ends (-b; busybox's has no -b, and on a PTY job the
				# offsets would miss the escapes and CRs), else the line's start.
				bg_cut=1 bg_me=
				if [ "$bg_tty" = 0 ]; then
					bg_me=$(tail -c +$((bg_s + 1)) "$bg_f" | head -c $((bg_e - bg_s)) | LC_ALL=C grep -b -o "$bg_ga" -e "$bg_re" 2>/dev/null | head -n 1 |
						LC_ALL=C awk '{ i = index($0, ":"); print substr($0, 1, i - 1) + length($0) - i; exit }')
				fi
				case $bg_me in '' | *[!0-9]*) bg_me=0 ;; esac
				if [ $((bg_me + 1024)) -gt 65536 ]; then
					[ $((bg_s + bg_me + 1024)) -ge "$bg_e" ] || bg_e=$((bg_s + bg_me + 1024))
					bg_s=$((bg_e - 65536))
				else
					bg_e=$((bg_s + 65536))
				fi
			fi
			if ! bg_chunk "$bg_st" "$bg_f" "$bg_s" "$bg_e"; then
				# Truncated under the read (a t record said so): no line;
				# the next look reads it from its start.
				eval "bg_from_$bg_st=0 bg_mark_$bg_st="
				continue
			fi
			[ "$bg_cut" = 0 ] || printf 'Z\t%s\n' "$bg_st"
			bg_state=match
			break
		fi
		bg_markof "$bg_f" "$bg_to"
		eval "bg_from_$bg_st=\$bg_to bg_mark_$bg_st=\$bg_mk"
	done
	[ -z "$bg_state" ] || break
	if [ "$bg_ended" = 1 ]; then
		bg_state=ended
		break
	fi
	if [ "$bg_once" = 1 ]; then
		for bg_st in $bg_streams; do
			eval "bg_from=\$bg_from_$bg_st bg_mark=\$bg_mark_$bg_st"
			printf 'F\t%s\t%s\t%s\n' "$bg_st" "$bg_from" "$bg_mark"
		done
		bg_state=pending
		break
	fi
	if [ "$bg_limit" -gt 0 ] && ! bg_intime; then
		bg_state=timeout
		break
	fi
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
if [ "$bg_once" != 1 ]; then
	bg_unwatch
	bg_wakedown
fi
[ "$bg_state" = match ] || printf 'W\t%s\n' "$bg_state"
# The job as the wait left it; its processes are not counted (nothing
# shows them here). A job removed while waited on is not found.
bg_obsrec "$bg_d" || bg_err notfound "$bg_ref"
