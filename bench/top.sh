#!/usr/bin/env bash
# CPU of an idle bgjob top on 1,000 ended jobs: top runs in a detached
# tmux window (120x40) for 20 s once it shows the jobs, and its CPU time
# (user + system, /proc/PID/stat) and that of every process it started
# is given as a share of one core, with the load average of the machine.
# The target (issue 24) is under 2%.
# Usage: bench/top.sh [BGJOB]   (default: go build ./cmd/bgjob)
# Environment (optional):
#   BENCH_TOP_JOBS     how many ended jobs (default 1000)
#   BENCH_TOP_SECONDS  how long top is measured (default 20)
#   BENCH_TOP_RUNNING  how many jobs (sleep) run beside them (default 0)
#   BENCH_TOP_SERVERS  how many jobs listening on a TCP port (python3 -m
#                      http.server on --port auto) run beside them
#                      (default 0): top shows their ports
#   BENCH_TOP_ROOT     a BGJOB_ROOT to keep the jobs in and reuse across
#                      runs (default: a temporary one, removed)
set -euo pipefail
cd "$(dirname "$0")/.."
bg=${1:-}
if [ -z "$bg" ]; then
	bg=$(mktemp -d)/bgjob
	go build -o "$bg" ./cmd/bgjob
	go build -o "$(dirname "$bg")/bgjob-full" ./cmd/bgjob-full
fi
jobs=${BENCH_TOP_JOBS:-1000}
secs=${BENCH_TOP_SECONDS:-20}
running=${BENCH_TOP_RUNNING:-0}
servers=${BENCH_TOP_SERVERS:-0}
root=${BENCH_TOP_ROOT:-}
tmp=$(mktemp -d)
if [ -z "$root" ]; then
	root=$tmp/root
fi
export BGJOB_ROOT=$root
sock=$tmp/tmux
sleepers=()
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; [ ${#sleepers[@]} -eq 0 ] || "$bg" stop --grace 0 "${sleepers[@]}" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# The jobs: as many as asked, all ended.
have=$("$bg" ls --limit 0 2>/dev/null | tail -n +2 | wc -l)
if [ "$have" -lt "$jobs" ]; then
	echo "making $((jobs - have)) jobs in $root" >&2
	seq "$((jobs - have))" | xargs -P 4 -I{} "$bg" run -q -- true >/dev/null
fi
until [ -z "$("$bg" ls --limit 0 --status running 2>/dev/null | tail -n +2)" ]; do sleep 0.2; done
for _ in $(seq "$running"); do
	sleepers+=("$("$bg" run -q -- sleep 3600)")
done
for _ in $(seq "$servers"); do
	# shellcheck disable=SC2016 # $PORT is the job's
	sleepers+=("$("$bg" run -q --port auto --ready-port any -- 'exec python3 -m http.server --bind 127.0.0.1 "$PORT"')")
done
n=$("$bg" ls --limit 0 | tail -n +2 | wc -l)

tmux -S "$sock" -f /dev/null new-session -d -s top -x 120 -y 40 "exec $(printf '%q' "$bg") top"
pid=$(tmux -S "$sock" display -p -t top '#{pane_pid}')
for _ in $(seq 600); do
	tmux -S "$sock" capture-pane -p -t top | grep -q "$n jobs" && break
	sleep 0.1
done
tmux -S "$sock" capture-pane -p -t top | grep -q "$n jobs" || {
	echo "bench: error: top never showed $n jobs" >&2
	exit 1
}

# ticks PID: the CPU clock ticks of PID and of its live descendants,
# theirs and their reaped children's (fields 14 to 17 of /proc/PID/stat).
ticks() {
	local t=0 p
	for p in $1 $(pgrep -P "$1" 2>/dev/null || true); do
		if [ "$p" != "$1" ]; then
			t=$((t + $(ticks "$p")))
			continue
		fi
		# The fields after the command's name, which ends in ")".
		t=$((t + $(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)
t0=$(ticks "$pid")
s0=$(date +%s.%N)
sleep "$secs"
t1=$(ticks "$pid")
s1=$(date +%s.%N)
load=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v t="$((t1 - t0))" -v hz="$hz" -v a="$s0" -v b="$s1" -v n="$n" -v r="$running" -v l="$servers" -v load="$load" 'BEGIN {
	s = b - a
	printf "idle top on %d jobs (%d running, %d listening): %.2f s of CPU in %.1f s, %.2f%% of a core (load average %s)\n", n, r, l, t / hz, s, 100 * t / hz / s, load
}'
