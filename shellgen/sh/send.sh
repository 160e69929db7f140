# send.sh: write the script's stdin to the stdin FIFO of the job bg_ref
# names (started with --stdin), or with bg_eof=1 end the keeper that holds
# the FIFO open, so the command reads end of file. Then print the job's
# observation. A copy the job does not take fails: E ended when the job
# ends first, E timeout after bg_limit milliseconds (0: no limit; by the
# clock, however long each look takes),
# after a G record with the bytes the copy delivered where the host tells;
# either way the copy is ended, so nothing is left behind. A PTY job
# whose input send --eof closed refuses more (E ended, as one that closed
# its stdin).
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err "$bg_fk" "$bg_ref"
[ -p "$bg_d/stdin" ] || bg_err nostdin "job $bg_ref was not started with --stdin"
bg_running "$bg_d" || bg_err ended "job $bg_ref has ended"
if [ "$bg_eof" = 1 ]; then
	if bg_line "$bg_d/stdin.keeper" && [ -n "$bg_l" ]; then
		bg_k=$bg_l
		bg_proc "$bg_k"
		# KILL, not TERM: a keeper forked but not yet sleep still has the
		# wrapper's TERM trap, which swallows a TERM (in dash, `trap : TERM;
		# sleep 9 & kill $!` leaves the sleep running), and the end of file
		# would never come.
		# The KILL takes effect when the keeper next runs, which on a
		# busy host can be after this script has ended: a send right
		# after would find the terminal's input still open. The keeper
		# is waited for (while it lives its pid is its own;
		# five seconds at most).
		if [ "$bg_pg" = "$bg_w" ]; then
			kill -KILL "$bg_k" 2>/dev/null
			bg_j=0
			while [ "$bg_j" -lt 250 ]; do
				bg_proc "$bg_k"
				[ "$bg_pg" = "$bg_w" ] || break
				bg_nap 20
				bg_j=$((bg_j + 1))
			done
		fi
	fi
else
	# On a PTY job script has stopped reading its input once the keeper is
	# gone (send --eof): the bytes would sit in the FIFO, never typed.
	if bg_ispty "$bg_d"; then
		bg_pg=
		if bg_line "$bg_d/stdin.keeper" && [ -n "$bg_l" ]; then bg_proc "$bg_l"; fi
		[ "$bg_pg" = "$bg_w" ] || bg_err ended "job $bg_ref's terminal takes no more input: send --eof closed it"
	fi
	# Opened for writing only, the FIFO has the job (and its keeper) as
	# readers while it runs; once the job is gone a blocked write is ended
	# here. The copy runs in the background so that this shell can watch.
	exec 3<&0
	cat <&3 >"$bg_d/stdin" 3<&- 2>/dev/null &
	bg_c=$!
	# Its start time: once the copy ends this shell reaps it while it
	# naps, and its pid may be another process's at the next look
	# (bg_ours), which kill -0 would find alive.
	bg_proc "$bg_c"
	bg_cst=$bg_s
	exec 3<&-
	[ "$bg_limit" -eq 0 ] || bg_deadline "$bg_limit"
	# The looks at the job back off from a tenth of a second to one a
	# second: a copy that lasts, such as attach's for as long as someone is
	# attached, mostly waits for keys, and a look costs a sleep(1). The
	# clock of a time limit cuts a nap short.
	bg_sn=100 bg_cok=
	while bg_ours "$bg_c" "$bg_cst"; do
		if ! bg_running "$bg_d"; then
			# A job that took the last bytes and ended may end before the
			# copy does: the copy has a moment to finish; one still
			# writing then has no reader, and fails.
			bg_j=0
			while bg_ours "$bg_c" "$bg_cst" && [ "$bg_j" -lt 10 ]; do
				bg_nap
				bg_j=$((bg_j + 1))
			done
			kill "$bg_dl" 2>/dev/null
			if ! bg_ours "$bg_c" "$bg_cst" && wait "$bg_c"; then
				bg_cok=1
				break
			fi
			kill "$bg_c" 2>/dev/null
			bg_err ended "job $bg_ref ended before it read all the input"
		fi
		if [ "$bg_limit" -gt 0 ] && ! bg_intime; then
			# What the copy wrote is in the FIFO, the job's: its count of
			# written bytes (/proc/PID/io, where the host has it), read once
			# a STOP has ended the write it is blocked in (a G record).
			kill -STOP "$bg_c" 2>/dev/null
			bg_j=0
			while [ "$bg_j" -lt 20 ] && IFS= read -r bg_x 2>/dev/null <"/proc/$bg_c/stat"; do
				case ${bg_x##*) } in [Tt]*)
					while IFS=': ' read -r bg_x bg_n; do
						[ "$bg_x" != wchar ] || printf 'G\t%s\n' "$bg_n"
					done <"/proc/$bg_c/io" 2>/dev/null
					break
					;;
				esac
				bg_nap 20
				bg_j=$((bg_j + 1))
			done
			kill -KILL "$bg_c" 2>/dev/null
			bg_err timeout "job $bg_ref did not take the input within the timeout"
		fi
		bg_dlnap "$bg_sn"
		bg_sn=$((bg_sn * 2))
		[ "$bg_sn" -le 1000 ] || bg_sn=1000
	done
	kill "$bg_dl" 2>/dev/null
	if [ -z "$bg_cok" ] && ! wait "$bg_c"; then
		# No reader is left: the job is ending, or closed its stdin. It
		# has two seconds to end.
		bg_deadline 2000
		while bg_running "$bg_d" && bg_intime; do bg_dlnap; done
		kill "$bg_dl" 2>/dev/null
		bg_running "$bg_d" || bg_err ended "job $bg_ref ended before it read all the input"
		bg_err ended "job $bg_ref closed its stdin before it read all the input"
	fi
fi
# The job as it took the data; its processes are not counted (nothing
# shows them here).
bg_obsrec "$bg_d"
