#!/usr/bin/env bash
# bench/quietwait.sh: what a quiet wait over SSH costs the host at once
# and by the second: the host's CPU (bench/sshd.sh's host) per call of
# ssh's own `true`, bgjob status and wait of an ended job, and waits of
# jobs that sleep 2, 5 and 20 s; two rounds.
#
#	bash bench/quietwait.sh [BGJOB]   (default: go build ./cmd/bgjob)
#
# Needs openssh-server (and strace for the count of programs at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/bgjob-quietwait.XXXXXX)
. bench/sshd.sh
bg=${1:-}
if [ -z "$bg" ]; then
	go build -o "$tmp/bgjob" ./cmd/bgjob
	go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
	bg=$tmp/bgjob
fi
g=(--ssh-config "$cfg" -H bench --root "$tmp/root")
# m LABEL N CMD...: the host's CPU per run of N runs of CMD.
m() {
	local label=$1 n=$2 a b
	shift 2
	a=$(host)
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 || true; done
	sleep 0.5 # the sessions' last processes are reaped
	b=$(host)
	printf '%-32s %6.3f s per call (load %s)\n' "$label" "$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { print (b - a) / n }')" "$(cut -d' ' -f1 /proc/loadavg)"
}
id=$("$bg" "${g[@]}" run -q -- true)
sleep 0.5
"$bg" "${g[@]}" status "$id" >/dev/null # records it without leftovers
for round in 1 2; do
	echo "round $round:"
	m "ssh host true" 10 ssh -F "$cfg" bench true
	m "status of an ended job" 10 "$bg" "${g[@]}" status "$id"
	m "wait of an ended job" 10 "$bg" "${g[@]}" wait "$id"
	for s in 2 5 20; do
		w=$("$bg" "${g[@]}" run -q -- sleep "$s")
		sleep 0.3
		m "wait, a job that sleeps ${s}s" 1 "$bg" "${g[@]}" wait "$w"
	done
done
if command -v strace >/dev/null 2>&1; then
	w=$("$bg" "${g[@]}" run -q -- sleep 2)
	sleep 0.3
	strace -f -qq -e trace=execve -o "$tmp/trace" -p "$listener" &
	st=$!
	sleep 0.5
	"$bg" "${g[@]}" wait "$w" >/dev/null
	sleep 0.5
	kill "$st"
	wait "$st" 2>/dev/null || true
	echo "programs started on the host by one wait of a 2 s job: $(grep -c 'execve(' "$tmp/trace")"
	grep -o 'execve("[^"]*"' "$tmp/trace" | sort | uniq -c | sort -rn
fi
