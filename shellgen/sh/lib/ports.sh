# ports.sh: the TCP ports a job's processes listen on, and the ports a
# launch takes (run --port): from /proc where the host has it (the
# sockets among the processes' descriptors against the LISTEN rows of
# /proc/net/tcp and tcp6), else from ss or lsof (and netstat for whether
# a port is taken).

# bg_ports PIDS: print a p record, "p PORT tcp ADDRESS", for each TCP port
# one of PIDS (" PID PID ...") listens on, each port and address once,
# by port then address. An IPv4 address is dotted, an IPv6 one as Go's
# net.IP prints it ("::", "::1", an IPv4-mapped one dotted).
bg_ports() {
	[ -n "$1" ] || return 0
	bg_portsof "$1" | LC_ALL=C sort -u -t "$bg_tab" -k1,1n -k2,2 | while IFS="$bg_tab" read -r bg_pp bg_pa; do
		printf 'p\t%s\ttcp\t%s\n' "$bg_pp" "$bg_pa"
	done
}

# bg_portsof PIDS: print "PORT<tab>ADDRESS" for each TCP socket one of
# PIDS listens on (bg_ports), in no order.
bg_portsof() {
	if [ -r /proc/net/tcp ]; then
		bg_px=
		for bg_pq in $1; do bg_px="$bg_px /proc/$bg_pq/fd"; done
		# ls -l prints each descriptor's link, "N -> socket:[INODE]": one
		# process for every descriptor of every pid (/proc's names are
		# digits). The tables are read only for processes with a socket:
		# a read of /proc/net/tcp walks every socket of the host's, which
		# costs milliseconds (docs/benchmarks.md).
		# shellcheck disable=SC2086,SC2012,SC2010 # the paths are words on purpose
		bg_pk=$(ls -l $bg_px 2>/dev/null | grep -o 'socket:\[[0-9]*\]')
		[ -n "$bg_pk" ] || return 0
		printf '%s\n' "$bg_pk" | awk '
			NR == FNR {
				if (match($0, /socket:\[[0-9]+\]/)) s[substr($0, RSTART + 8, RLENGTH - 9)] = 1
				next
			}
			FNR > 1 && $4 == "0A" && ($10 in s) {
				split($2, a, ":")
				printf "%d\t%s\n", hex(a[2]), addr(a[1])
			}
			function hex(h,   i, n) {
				n = 0
				for (i = 1; i <= length(h); i++) n = n * 16 + index("0123456789ABCDEF", toupper(substr(h, i, 1))) - 1
				return n
			}
			# One 32-bit word of /proc/net/tcp in host (little-endian) order,
			# as 4 bytes in network order.
			function word(h, b) {
				b[1] = hex(substr(h, 7, 2)); b[2] = hex(substr(h, 5, 2))
				b[3] = hex(substr(h, 3, 2)); b[4] = hex(substr(h, 1, 2))
			}
			function addr(h,   b, g, i, w, z, bz, bl, zl, o) {
				if (length(h) == 8) {
					word(h, b)
					return b[1] "." b[2] "." b[3] "." b[4]
				}
				for (w = 0; w < 4; w++) {
					word(substr(h, w * 8 + 1, 8), b)
					g[w * 2 + 1] = b[1] * 256 + b[2]
					g[w * 2 + 2] = b[3] * 256 + b[4]
				}
				if (g[1] + g[2] + g[3] + g[4] + g[5] == 0 && g[6] == 65535) {
					word(substr(h, 25, 8), b)
					return b[1] "." b[2] "." b[3] "." b[4]
				}
				# The longest run of zero groups, of two or more, the first
				# of equal ones, is written "::".
				bz = 0; bl = 0; zl = 0
				for (i = 1; i <= 8; i++) {
					if (g[i] == 0) { zl++; if (zl > bl) { bl = zl; bz = i - zl + 1 } } else zl = 0
				}
				if (bl < 2) bz = 0
				o = ""
				for (i = 1; i <= 8; i++) {
					if (bz && i == bz) { o = o "::"; i += bl - 1; continue }
					if (o != "" && substr(o, length(o)) != ":") o = o ":"
					o = o sprintf("%x", g[i])
				}
				return o
			}' - /proc/net/tcp /proc/net/tcp6 2>/dev/null
	elif command -v ss >/dev/null 2>&1; then
		ss -Hltnp 2>/dev/null | bg_pids=$1 awk '
			BEGIN { n = split(ENVIRON["bg_pids"], a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
			{
				u = $0; hit = 0
				while (match(u, /pid=[0-9]+/)) { if (substr(u, RSTART + 4, RLENGTH - 4) in want) hit = 1; u = substr(u, RSTART + RLENGTH) }
				if (!hit) next
				l = $4; p = l; sub(/.*:/, "", p); sub(/:[^:]*$/, "", l)
				gsub(/[][]/, "", l); sub(/%.*/, "", l)
				if (l == "*") l = "0.0.0.0"
				if (l ~ /^::ffff:[0-9.]+$/) sub(/^::ffff:/, "", l)
				printf "%d\t%s\n", p, l
			}'
	elif command -v lsof >/dev/null 2>&1; then
		bg_px=$(printf '%s' "$1" | sed 's/^ *//; s/ \{1,\}/,/g')
		lsof -nP -a -p "$bg_px" -iTCP -sTCP:LISTEN -F n 2>/dev/null | awk '
			/^n/ {
				l = substr($0, 2); p = l; sub(/.*:/, "", p); sub(/:[^:]*$/, "", l)
				gsub(/[][]/, "", l)
				if (l == "*") l = "0.0.0.0"
				printf "%d\t%s\n", p, l
			}'
	fi
}

# bg_listening: set bg_pl to the TCP ports the host listens on, " PORT
# PORT ... ", from /proc/net/tcp and tcp6 (LISTEN rows), else ss or
# netstat ("" where it has none of them: nothing known to be taken).
bg_listening() {
	if [ -r /proc/net/tcp ]; then
		bg_pl=$(awk 'FNR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			while IFS= read -r bg_px; do printf ' %d' "0x$bg_px"; done)
	elif command -v ss >/dev/null 2>&1; then
		bg_pl=$(ss -Hltn 2>/dev/null | awk '{ p = $4; sub(/.*:/, "", p); printf " %s", p }')
	elif command -v netstat >/dev/null 2>&1; then
		bg_pl=$(netstat -an 2>/dev/null | awk '/LISTEN/ && /^tcp/ { p = $4; sub(/.*[:.]/, "", p); printf " %s", p }')
	else
		bg_pl=
	fi
	bg_pl="$bg_pl "
}

# bg_portholder PORT: set bg_ph to what listens on TCP port PORT, as a
# refusal names it: "job ID" for a process that carries a job's id,
# "process PID (NAME)" for another of this user, "another user's process"
# for one whose descriptors cannot be read; "" when /proc cannot tell.
bg_portholder() {
	bg_ph=
	[ -r /proc/net/tcp ] || return 0
	bg_pi=$(awk -v p="$(printf '%04X' "$1")" 'FNR > 1 && $4 == "0A" { split($2, a, ":"); if (a[2] == p) print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
	[ -n "$bg_pi" ] || return 0
	bg_ph="another user's process"
	for bg_pi in $bg_pi; do
		# The first of this user's processes with the socket open.
		# shellcheck disable=SC2012 # /proc's names are digits
		bg_pq=$(ls -l /proc/[0-9]*/fd 2>/dev/null | awk -v s="socket:[$bg_pi]" '
			/^\/proc\// { d = $0; sub(/^\/proc\//, "", d); sub(/\/.*/, "", d); next }
			index($0, s) { print d; exit }')
		[ -n "$bg_pq" ] || continue
		bg_px=$(grep -a -o -s -e "BGJOB_JOB_ID=$bg_idre" "/proc/$bg_pq/environ" 2>/dev/null | head -n 1)
		if [ -n "$bg_px" ]; then
			bg_phj=${bg_px#BGJOB_JOB_ID=}
			bg_ph="job $bg_phj"
		else
			bg_px=
			IFS= read -r bg_px 2>/dev/null <"/proc/$bg_pq/comm"
			bg_ph="process $bg_pq ($bg_px)"
		fi
		return 0
	done
}

# bg_unport PORT JOB: remove the reservation of TCP port PORT (port.sh's
# $bg_root/.ports/PORT) when it is the job JOB's ("WS/ID"), under the
# lock of the reservations, which a run taking a port holds: the job is
# removed, or its launch was refused. Another job's reservation stays.
bg_unport() {
	bg_ud=$bg_root/.ports
	bg_line "$bg_ud/$1" || return 0
	case $bg_l in "$2 "*) ;; *) return 0 ;; esac
	bg_proc $$
	bg_dirlock "$bg_ud/.lock" "$$ $bg_s" 300 || return 0
	if bg_line "$bg_ud/$1"; then
		case $bg_l in "$2 "*) rm -f "$bg_ud/$1" ;; esac
	fi
	bg_dirunlock "$bg_ud/.lock"
}
