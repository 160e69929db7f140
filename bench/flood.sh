#!/usr/bin/env bash
# bench/flood.sh: the CPU of following, to /dev/null, a job that writes
# about 100 MB/s for 5 s (50 writes of 10 MiB of log lines, a tenth of a
# second apart: 500 MiB in all): bgjob logs -f against tail -f of the same
# log (GNU tail, which follows by inotify), locally and over SSH (the
# loopback test sshd of bench/sshd.sh; there the host's CPU is its
# cgroup's, against ssh HOST tail -f). Each follower gets a fresh job, the
# two interleaved, three rounds. The caller's CPU is the follower's and its
# children's (bash's times).
#
#	bash bench/flood.sh [BGJOB]   (default: go build ./cmd/bgjob)
#
# Needs root (the cgroup), openssh-server and GNU tail (--pid).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/bgjob-flood.XXXXXX)
hostcg=1
. bench/sshd.sh
bg=${1:-}
if [ -z "$bg" ]; then
	CGO_ENABLED=0 go build -o "$tmp/bgjob" ./cmd/bgjob
	CGO_ENABLED=0 go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
	bg=$tmp/bgjob
fi
root=$tmp/root
g=(--ssh-config "$cfg" -H bench --root "$root")
echo "host CPU: ${cg:-the reaped children of the listener}"

. bench/cpu.sh
flood='i=0; while [ $i -lt 50 ]; do yes "2026-12-04T22:00:00.000Z INFO request served path=/api/v1/items status=200 bytes=5120" | head -c 10485760; i=$((i+1)); sleep 0.1; done'
# start: a fresh flooding job, its directory in dir and its wrapper in w.
start() {
	id=$("$bg" --root "$root" run -q -- "$flood")
	dir=$root/default/$id
	w=$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$dir/meta.json")
}
# measure LABEL CMD...: CMD's CPU (and the host's, over SSH) while it
# follows the job start made; what it printed is counted apart.
measure() {
	local label=$1 a b here
	shift
	a=$(host)
	here=$(cpu "$@")
	sleep 1.2
	b=$(host)
	printf '  %-28s caller %5.2fs  host %5.2fs\n' "$label" "$here" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')"
	rm -rf "$dir"
}
for round in 1 2 3; do
	echo "round $round (load $(cut -d' ' -f1 /proc/loadavg)):"
	start
	measure "tail -f" tail -c +1 --pid="$w" -f "$dir/stdout.log"
	start
	measure "bgjob logs -f" "$bg" --root "$root" logs -f "$id"
	start
	measure "ssh HOST tail -f" ssh -F "$cfg" bench "tail -c +1 --pid=$w -f $dir/stdout.log"
	start
	measure "bgjob -H HOST logs -f" "$bg" "${g[@]}" logs -f "$id"
done
# Each follower delivers the whole log (not timed).
start
n1=$("$bg" --root "$root" logs -f "$id" | wc -c)
start
n2=$("$bg" "${g[@]}" logs -f "$id" | wc -c)
echo "bytes delivered: locally $n1, over SSH $n2 (each job writes 524288000)"
