#!/usr/bin/env bash
# The queue (run --slots): how soon the next job starts once the one
# before it ends, and what queued jobs cost while they wait.
# 1. N jobs run with --slots 1, each recording its start and end
#    (date +%s%N): the gap between one's end and the next one's start,
#    min, median and max.
# 2. Q jobs queued behind one that runs: the CPU clock ticks their wrappers
#    use in 5 s (from /proc/PID/stat).
# Usage: bench/queue.sh [BGJOB] [N] [Q]   (default: go build ./cmd/bgjob, 20, 100)
set -euo pipefail
cd "$(dirname "$0")/.."
bg=${1:-}
if [ -z "$bg" ]; then
	bg=$(mktemp -d)/bgjob
	go build -o "$bg" ./cmd/bgjob
	go build -o "$(dirname "$bg")/bgjob-full" ./cmd/bgjob-full
fi
n=${2:-20}
q=${3:-100}
root=$(mktemp -d)
export BGJOB_ROOT=$root
trap '"$bg" stop --all --grace 0 >/dev/null 2>&1; rm -rf "$root"' EXIT
log=$root/times
ids=()
for i in $(seq "$n"); do
	ids+=("$("$bg" run -q --slots 1 -- "date +%s%N >>$log; date +%s%N >>$log")")
done
"$bg" wait "${ids[@]}"
awk 'NR % 2 == 1 && NR > 1 { print ($1 - end) / 1e6 } NR % 2 == 0 { end = $1 }' "$log" | sort -n |
	awk '{ g[NR] = $1 } END { printf "next job started after the one before ended: min %.1f ms, median %.1f ms, max %.1f ms (%d gaps)\n", g[1], g[int((NR + 1) / 2)], g[NR], NR }'

"$bg" run -q --slots 1 -- 'sleep 600' >/dev/null
pids=()
for i in $(seq "$q"); do
	id=$("$bg" run -q --slots 1 -- true)
	pids+=("$("$bg" status --json "$id" | sed 's/.*"pid":\([0-9]*\).*/\1/')")
done
ticks() {
	local t=0 p f
	for p in "${pids[@]}"; do
		f=$(sed 's/.*) //' "/proc/$p/stat")
		set -- $f
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}
before=$(ticks)
sleep 5
echo "$q queued jobs used $(($(ticks) - before)) clock ticks of CPU in 5 s ($(getconf CLK_TCK) a second)"
