# logs.sh: reading a job's logs: the reader's cursor lock, the D and C
# records that carry a range of bytes, and the boundaries a range that ends
# while the job runs must respect (a whole UTF-8 character, on a PTY job a
# whole escape sequence).

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

# bg_utf8end FILE SIZE FROM: set bg_to to SIZE less an incomplete UTF-8
# sequence at the end of the first SIZE bytes of FILE, but never below
# FROM, where the read starts (a range never ends before it starts: its
# reader would get the bytes between again). A byte from 248 up starts no
# sequence: it is not held back.
bg_utf8end() {
	# The arguments are kept: the bytes below take their place.
	bg_ufrom=$3 bg_usize=$2
	bg_to=$2
	bg_k=3
	[ "$2" -ge 3 ] || bg_k=$2
	[ "$bg_k" -gt 0 ] || return 0
	# shellcheck disable=SC2046 # the bytes are words on purpose
	set -- $(tail -c +$(($2 - bg_k + 1)) "$1" | head -c "$bg_k" | od -An -tu1)
	bg_have=0
	while [ $# -gt 0 ]; do
		eval "bg_c=\${$#}"
		bg_have=$((bg_have + 1))
		if [ "$bg_c" -lt 128 ]; then return 0; fi
		if [ "$bg_c" -ge 248 ]; then return 0; fi
		if [ "$bg_c" -ge 192 ]; then
			bg_need=2
			[ "$bg_c" -lt 224 ] || bg_need=3
			[ "$bg_c" -lt 240 ] || bg_need=4
			[ "$bg_have" -ge "$bg_need" ] || bg_to=$((bg_to - bg_have))
			[ "$bg_to" -ge "$bg_ufrom" ] || [ "$bg_ufrom" -gt "$bg_usize" ] || bg_to=$bg_ufrom
			return 0
		fi
		# drop the last positional parameter
		bg_a=
		bg_uj=1
		for bg_ux in "$@"; do
			[ "$bg_uj" -lt $# ] && bg_a="$bg_a $bg_ux"
			bg_uj=$((bg_uj + 1))
		done
		set -- $bg_a
	done
}

# bg_escend FILE FROM [WHOLE]: take off the end of the bytes FROM to bg_to
# an escape sequence cut off there, or carriage returns a newline may
# follow, as termtext sees them, so that a read that goes on from bg_to
# does not start inside a sequence (logs --plain would print its tail as
# text). It looks at the last 4 KiB only, and never makes the range empty:
# a longer sequence stays, and so does a range that is all sequence,
# unless WHOLE (a cut to the cap, WHOLE the end of the range before it)
# asks for that sequence whole (bg_escwhole).
bg_escend() {
	bg_k=$((bg_to - $2))
	[ "$bg_k" -le 4096 ] || bg_k=4096
	[ "$bg_k" -gt 0 ] || return 0
	bg_e=$(tail -c +$((bg_to - bg_k + 1)) "$1" | head -c "$bg_k" | od -An -v -tu1 | awk '
	{ for (i = 1; i <= NF; i++) b[n++] = $i + 0 }
	END {
		e = -1
		for (i = n - 1; i >= 0; i--) if (b[i] == 27) { e = i; break }
		cut = n
		if (e >= 0) {
			done = 0
			c = (e + 1 < n) ? b[e + 1] : -1
			if (c == 91 || (c >= 32 && c <= 47)) {
				lo = 32; hi = 63
				if (c != 91) hi = 47
				for (j = e + 2; j < n; j++) if (b[j] < lo || b[j] > hi) { done = 1; break }
			} else if (c == 93 || c == 80 || c == 88 || c == 94 || c == 95) {
				for (j = e + 2; j < n; j++) if (b[j] == 7 || b[j] == 24 || b[j] == 26 || b[j] == 10) { done = 1; break }
			} else if (c >= 0) {
				done = 1
			}
			if (!done) cut = e
		}
		while (cut > 0 && b[cut - 1] == 13) cut--
		print n - cut
	}')
	bg_e=${bg_e:-0}
	if [ "$bg_e" = "$bg_k" ]; then
		# All sequence: it stays, or is taken whole.
		[ -n "${3-}" ] && [ "$bg_k" = $((bg_to - $2)) ] || return 0
		bg_escwhole "$1" "$2" "$3"
		return 0
	fi
	bg_to=$((bg_to - bg_e))
}

# bg_escwhole FILE FROM WHOLE: set bg_to to the end of the escape sequence
# at FROM, as termtext.SequenceLen counts it, or of the carriage returns
# there (with the sequences between them, and the newline that may follow
# them), but not past WHOLE; it looks
# at 4 KiB (a longer sequence is cut there). A cap smaller than a sequence
# thus takes it whole, as it takes a character.
bg_escwhole() {
	bg_k=$(($3 - $2))
	[ "$bg_k" -le 4096 ] || bg_k=4096
	[ "$bg_k" -gt 0 ] || return 0
	bg_k=$(tail -c +$(($2 + 1)) "$1" | head -c "$bg_k" | od -An -v -tu1 | awk '
	function esc(i, c, j, x, hi, fin) {
		inc = 0
		if (i + 1 >= n) { inc = 1; return 1 }
		c = b[i + 1]
		if (c == 91 || (c >= 32 && c <= 47)) {
			hi = 47; fin = 48
			if (c == 91) { hi = 63; fin = 64 }
			for (j = i + 2; j < n; j++) {
				x = b[j]
				if (x >= 32 && x <= hi) continue
				if ((x >= fin && x <= 126) || x == 24 || x == 26) return j + 1 - i
				return j - i
			}
			inc = 1
			return n - i
		}
		if (c == 93 || c == 80 || c == 88 || c == 94 || c == 95) {
			for (j = i + 2; j < n; j++) {
				x = b[j]
				if (x == 10) return j - i
				if (x == 7 || x == 24 || x == 26) return j + 1 - i
				if (x == 27) {
					if (j + 1 == n) { inc = 1; return j + 1 - i }
					if (b[j + 1] == 92) return j + 2 - i
					return j - i
				}
			}
			inc = 1
			return n - i
		}
		if ((c >= 48 && c <= 126) || c == 24 || c == 26) return 2
		return 1
	}
	{ for (i = 1; i <= NF; i++) b[n++] = $i + 0 }
	END {
		if (n == 0) { print 0; exit }
		if (b[0] == 27) { print esc(0); exit }
		i = 0
		while (i < n) {
			if (b[i] == 13) { i++; continue }
			if (b[i] != 27) break
			m = esc(i)
			if (inc) { i = n; break }
			i += m
		}
		# Carriage returns before a newline go with it.
		if (i < n && b[i] == 10) i++
		print i
	}')
	[ "$(($2 + ${bg_k:-0}))" -le "$bg_to" ] || bg_to=$(($2 + bg_k))
}

# bg_screen: copy stdin to stdout as the text of a terminal's lines, what
# wait --for matches on a PTY job: without escape sequences and without
# carriage returns, byte by byte (the C locale). The sequences are
# termtext's (CSI, the strings OSC, DCS, SOS, PM and APC, the other
# escapes; CAN or SUB abandons one, another control byte ends it and
# stays; TestScreenIsTermtext holds the two to the same bytes), with one
# difference: a string not terminated ends at its line's end, however
# long (termtext ends it after 8 KiB too: a bound that large costs GNU
# sed seconds). busybox's sed, whose regexec reads a line up to a NUL
# byte, ends a string at a NUL too. sed reads each line once, and looks
# for sequences only in lines that hold an ESC. Newlines stay, so line N
# here is line N of the input. It uses bg_sx and bg_sy, sed's
# expressions: a caller in a loop makes them once (bg_screenexp), since
# bg_screen in a pipeline runs in a subshell.
bg_screen() {
	[ -n "${bg_sx-}" ] || bg_screenexp
	LC_ALL=C sed -E -e "$bg_sx" -e "$bg_sy"
}

# bg_screenexp: set bg_sx and bg_sy, the sed expressions of bg_screen.
bg_screenexp() {
	bg_se=$(printf '\033')
	bg_sb=$(printf '\007')
	bg_sc=$(printf '\030\032')
	bg_sx="/$bg_se/s#$bg_se([]PX^_][^$bg_sb$bg_sc$bg_se]*([$bg_sb$bg_sc]|$bg_se\\\\)?|\\[[ -?]*[@-~$bg_sc]?|[ -/]+[0-~$bg_sc]?|[0-~$bg_sc])?##g"
	bg_sy="s#$(printf '\r')##g"
}
