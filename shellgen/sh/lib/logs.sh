# logs.sh: reading a job's logs: the reader's cursor lock, the D and C
# records that carry a range of bytes, the logs' sizes (text.sh has the
# boundaries a range must respect).

# bg_cursorlock FILE: take the lock FILE of a read cursor, waiting up to
# 5 s by the host's clock (bg_busylock), or end the script with an E busy
# record. With flock(1) the kernel
# drops the lock when its holder dies; without it, a directory FILE.d
# holds the holder's pid and start time, and a holder that is gone loses
# it. bg_cursorunlock lets it go.
bg_cursorlock() {
	bg_lf=$1 bg_l0=
	if command -v flock >/dev/null 2>&1; then
		# command: a failed redirection of exec would end the shell there,
		# with the shell's own words, not an io record.
		{ command exec 8>>"$bg_lf"; } 2>/dev/null || bg_err io "cannot open the cursor lock $bg_lf (is the file system read-only or full?)"
		# -n, not -w: busybox's flock has only -n.
		until flock -n 8; do bg_busylock "$bg_lf"; done
		bg_lf=
		return 0
	fi
	bg_me=$$
	if [ -r /proc/self/stat ]; then IFS=' ' read -r bg_me bg_l <"/proc/self/stat"; fi
	bg_proc "$bg_me"
	bg_lown="$bg_me $bg_s"
	until mkdir "$bg_lf.d" 2>/dev/null; do
		if [ ! -e "$bg_lf.d" ]; then
			# Let go of since (a race), or refused: a second try tells.
			mkdir "$bg_lf.d" 2>/dev/null && break
			[ -e "$bg_lf.d" ] || bg_err io "cannot make the cursor lock $bg_lf.d (is the file system read-only or full?)"
		fi
		if bg_line "$bg_lf.d/owner"; then
			bg_proc "${bg_l%% *}"
			if [ -z "$bg_s" ] || [ "$bg_s" != "${bg_l#* }" ]; then
				rm -rf "$bg_lf.d"
				continue
			fi
		fi
		bg_busylock "$bg_lf.d"
	done
	printf '%s\n' "$bg_lown" >"$bg_lf.d/owner"
}

# bg_busylock LOCK: one turn of bg_cursorlock's wait for LOCK, which
# another reader holds: end the script with an E busy record once 5 s have
# passed on the host's clock since the first turn (bg_l0), else nap. A
# count of naps stretched on a loaded host: 50 naps took longer than the
# other reader held the cursor, so a reader that should have been told
# the cursor is busy got it, empty.
bg_busylock() {
	bg_now
	[ -n "$bg_l0" ] || bg_l0=$bg_nw
	[ $((bg_nw - bg_l0)) -lt 5 ] || bg_err cursorbusy "the read cursor is busy: another reader holds $1"
	bg_nap
}

# bg_cursorunlock: let go of the lock bg_cursorlock took.
bg_cursorunlock() {
	if [ -n "$bg_lf" ]; then rm -rf "$bg_lf.d"; else exec 8>&-; fi
}

# bg_chunk STREAM FILE FROM TO: print bytes FROM..TO of FILE as D records
# (see records.go). Once the job has ended (bg_live=0) its bytes do not
# change and one record carries them, read at their offsets (bg_exact),
# never from the log's end: an escapee of the job may still append to it.
# While it runs, the --max-log-size capper may drop bytes as they are read, so the range goes out in pieces of at most 1 MiB,
# each followed by a C record with the dropped count read after the piece:
# the reader discards what lies below it. (The capper records a drop before
# it punches the hole, so bytes at or above that count were read intact.)
# A log that ended before the bytes did was truncated after its size was
# taken: NUL bytes filled the record to its length, so that the records
# after it stay in step, and a t record after them says that they are not
# the log's (bg_rewound); bg_chunk then fails, and the caller reads on
# from the log's start.
bg_chunk() {
	if [ "${bg_live-1}" = 0 ]; then
		printf 'D\t%s\t%s\t%s\t0\n' "$1" "$3" $(($4 - $3))
		[ "$4" -gt "$3" ] || return 0
		bg_exact "$2" "$3" $(($4 - $3))
		bg_chunked "$1" "$2"
		return
	fi
	bg_cf=$3
	while :; do
		bg_ct=$((bg_cf + 1048576))
		[ "$bg_ct" -le "$4" ] || bg_ct=$4
		printf 'D\t%s\t%s\t%s\t1\n' "$1" "$bg_cf" $((bg_ct - bg_cf))
		bg_short=0
		if [ "$bg_ct" -gt "$bg_cf" ]; then bg_exact "$2" "$bg_cf" $((bg_ct - bg_cf)); fi
		bg_chunked "$1" "$2" || return 1
		bg_cd=0
		if bg_line "${2%.log}.dropped"; then bg_cd=${bg_l:-0}; fi
		printf 'C\t%s\t%s\n' "$1" "$bg_cd"
		bg_cf=$bg_ct
		[ "$bg_cf" -lt "$4" ] || return 0
	done
}

# bg_chunked STREAM FILE: after bg_exact's bytes of FILE, the log of
# STREAM: fail, with a t record, where the log ended before them.
bg_chunked() {
	[ "$bg_short" = 1 ] || return 0
	bg_rewound "$1" $((0 + $(exec wc -c <"$2" 2>/dev/null)))
	return 1
}

# bg_exact FILE FROM COUNT: print COUNT bytes of FILE from byte FROM, no
# fewer: where the file ends first (it was truncated since its size was
# taken) NUL bytes fill up to COUNT, and bg_short is 1 (else 0). With a dd
# that skips in bytes and fills its blocks (GNU's, busybox's), whole MiB
# then the rest (bg_exdd), dd's count of the blocks it read telling;
# elsewhere bg_range, then the file's size.
bg_exact() {
	bg_short=0
	if [ "${bg_xdd-1}" = 1 ]; then
		bg_xb=$(($3 / 1048576))
		bg_exdd "$1" "$2" 1048576 "$bg_xb" && bg_exdd "$1" $(($2 + bg_xb * 1048576)) $(($3 % 1048576)) 1 && return 0
	fi
	{
		bg_range "$1" "$2" "$3"
		head -c "$3" /dev/zero
	} 2>/dev/null | head -c "$3"
	bg_xs=$(exec wc -c <"$1" 2>/dev/null)
	[ "${bg_xs:-0}" -ge $(($2 + $3)) ] || bg_short=1
}

# bg_exdd FILE FROM BS COUNT: bg_exact's dd: COUNT blocks of BS bytes of
# FILE from byte FROM, a block the file ends in filled with NUL bytes, and
# the blocks after it all NUL (bg_short=1). Fail, having printed nothing,
# where this dd cannot (bg_xdd=0).
bg_exdd() {
	[ "$3" -gt 0 ] && [ "$4" -gt 0 ] || return 0
	{ bg_xx=$(LC_ALL=C dd if="$1" bs="$3" count="$4" skip="$2" iflag=skip_bytes,fullblock conv=sync 2>&1 >&4 4>&-); } 4>&1
	case $bg_xx in
	*" records in"*) ;;
	*)
		bg_xdd=0
		return 1
		;;
	esac
	# "WHOLE+PARTIAL records in", after any complaint (cannot skip).
	bg_xx=${bg_xx%%" records in"*}
	bg_xx=${bg_xx##*[!0-9+]}
	[ "${bg_xx%+*}" != "$4" ] || return 0
	bg_short=1
	bg_xn=$(($4 - ${bg_xx%+*} - ${bg_xx#*+}))
	[ "$bg_xn" -le 0 ] || head -c $((bg_xn * $3)) /dev/zero
}

# bg_range FILE FROM COUNT: print COUNT bytes of FILE from byte FROM: in
# one command, dd's, where bg_wakeup found a dd that counts in bytes,
# else with head, and tail first unless FROM is 0.
bg_range() {
	if [ -n "${bg_wdd-}" ]; then
		dd if="$1" bs=65536 skip="$2" count="$3" iflag=skip_bytes,count_bytes 2>/dev/null
	elif [ "$2" = 0 ]; then
		head -c "$3" "$1"
	else
		tail -c +$(($2 + 1)) "$1" | head -c "$3"
	fi
}

# bg_tailfrom FILE SIZE N: set bg_from to the offset where the last N
# lines of the first SIZE bytes of FILE start. tail -n alone counts from
# the end the file has when it reads, and a log that grew after SIZE was
# read (a running job's, an escapee's) put the start inside a line: the
# lines are counted in a window that ends at SIZE, 64 KiB first, four
# times larger until it holds their start (tail -n gave less than the
# window) or starts at the file's.
bg_tailfrom() {
	bg_tw=65536
	while [ "$bg_tw" -lt "$2" ]; do
		bg_tn=$(bg_range "$1" $(($2 - bg_tw)) "$bg_tw" | tail -n "$3" | wc -c)
		if [ "$bg_tn" -lt "$bg_tw" ]; then
			bg_from=$(($2 - bg_tn))
			return 0
		fi
		bg_tw=$((bg_tw * 4))
	done
	bg_from=$(($2 - $(head -c "$2" "$1" | tail -n "$3" | wc -c)))
}

# bg_endsizes DIR: read the sizes of the files of the job in DIR, which
# has ended (the wrapper writes exit_code after the last of its logs),
# with one wc(1): set bg_esz_STREAM to the size of the log of each stream
# of bg_streams ("" when wc gave none), and tell bg_metaline how large
# meta.json is (bg_mzput), so that it runs no find.
bg_endsizes() {
	bg_zd=$1
	# A meta.json that is not a regular file is not read (bg_metaline).
	set --
	[ ! -f "$1/meta.json" ] || set -- meta.json
	for bg_st in $bg_streams; do
		eval "bg_esz_$bg_st="
		set -- "$@" "$bg_st.log"
	done
	bg_zx=$(cd "$bg_zd" 2>/dev/null && exec wc -c "$@" 2>/dev/null)
	# A line "SIZE NAME" for each file (padded, but for one file), then a
	# total.
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	# shellcheck disable=SC2086 # the lines are words on purpose
	set -- $bg_zx
	IFS=$bg_oifs
	set +f
	for bg_zl in "$@"; do
		bg_zs=${bg_zl% *}
		bg_zs=${bg_zs##* }
		case $bg_zs in '' | *[!0-9]*) continue ;; esac
		case ${bg_zl##* } in
		meta.json)
			bg_zk=0
			[ "$bg_zs" -le 8192 ] || bg_zk=1
			[ "$bg_zs" -le "$bg_metamax" ] || bg_zk=2
			bg_mzput "$bg_zd" "$bg_zk"
			;;
		stdout.log) bg_esz_stdout=$bg_zs ;;
		stderr.log) bg_esz_stderr=$bg_zs ;;
		esac
	done
}

# bg_nolog STREAM: end the read, whose job's STREAM log is gone or no
# longer a file. The wrapper makes both logs before meta.json: unless a
# removal has begun (meta.json goes first), someone else put it there (a
# link is never followed, a FIFO would hang the read).
bg_nolog() {
	[ -e "$bg_d/meta.json" ] || bg_err notfound "$bg_ref"
	bg_err io "the $1.log of job ${bg_d##*/} is missing or not a regular file"
}

# bg_logsok: succeed when the log of each stream of bg_streams is a
# regular file, not a link; else fail, that stream in bg_st (the caller
# ends with bg_nolog).
bg_logsok() {
	for bg_st in $bg_streams; do
		if [ ! -f "$bg_d/$bg_st.log" ] || [ -L "$bg_d/$bg_st.log" ]; then return 1; fi
	done
}

# bg_fsizes: set bg_sz_STREAM to the size of the log of each stream of
# bg_streams: in one command, GNU stat, while the trigger of bg_wakeup
# runs, else with wc -c each (exec: bash forks again for a command with a
# redirection). Fail, the stream in bg_st, where a log is not a regular
# file (bg_logsok) or has no size (it went after that look).
bg_fsizes() {
	bg_logsok || return 1
	set --
	for bg_st in $bg_streams; do set -- "$@" "$bg_d/$bg_st.log"; done
	if [ -n "${bg_wt-}" ] && bg_x=$(stat -c %s -- "$@" 2>/dev/null); then
		# shellcheck disable=SC2086 # one size a word
		set -- $bg_x
		for bg_st in $bg_streams; do
			eval "bg_sz_$bg_st=\$1"
			shift
		done
		return 0
	fi
	for bg_st in $bg_streams; do
		bg_x=$(exec wc -c 2>/dev/null <"$bg_d/$bg_st.log")
		[ -n "$bg_x" ] || return 1
		eval "bg_sz_$bg_st=\$bg_x"
	done
}
