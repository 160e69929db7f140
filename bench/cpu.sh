# shellcheck shell=bash
# bench/cpu.sh: sourced by the bench scripts that count CPU. cpu CMD...
# prints the CPU seconds of CMD and its children (bash's times: the
# second line, the children's user and system time, e.g. "0m0.120s
# 0m0.080s"), CMD's output thrown away.
cpu() {
	local out
	out=$( (
		"$@" >/dev/null 2>&1 || true
		times
	) | tail -1)
	awk -v l="$out" 'BEGIN { split(l, f, " "); s = 0; for (i = 1; i <= 2; i++) { split(f[i], p, "m"); s += p[1] * 60 + p[2] }; printf "%.2f", s }'
}
