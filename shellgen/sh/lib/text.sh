# text.sh: the text in a log's bytes: where a range may end (a whole UTF-8
# character, a whole escape sequence) and a terminal's lines as text
# (bg_screen, which wait --for matches on a PTY job).

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
