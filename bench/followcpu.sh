#!/usr/bin/env bash
# CPU of following a chatty job: logs -f and wait --for of a job that
# prints 20 lines a second for 5 s, the CPU time (user + system) of bgjob
# and every process it started, beside tail -f of the same log.
# Usage: bench/followcpu.sh [BGJOB]   (default: go build ./cmd/bgjob)
set -euo pipefail
cd "$(dirname "$0")/.."
bg=${1:-}
if [ -z "$bg" ]; then
	bg=$(mktemp -d)/bgjob
	go build -o "$bg" ./cmd/bgjob
	go build -o "$(dirname "$bg")/bgjob-full" ./cmd/bgjob-full
fi
root=$(mktemp -d)
export BGJOB_ROOT=$root
trap '"$bg" stop --all --grace 0 >/dev/null 2>&1; rm -rf "$root"' EXIT
chatty='i=0; while [ $i -lt 100 ]; do echo "line $i"; i=$((i+1)); sleep 0.05; done'
. bench/cpu.sh
for round in 1 2 3; do
	id=$("$bg" run -q -- "$chatty")
	f=$(cpu "$bg" logs -f "$id")
	id=$("$bg" run -q -- "$chatty; echo READY")
	w=$(cpu "$bg" wait --for READY --timeout 60s "$id")
	id=$("$bg" run -q -- "$chatty")
	t=$(cpu timeout 5.2 tail -f "$root/default/$id/stdout.log")
	echo "round $round: logs -f ${f}s, wait --for ${w}s, tail -f ${t}s of CPU for a 5 s job"
done
