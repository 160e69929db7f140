#!/usr/bin/env bash
# What a look costs when it is made in Go on this machine (status of a job
# whose leftovers are recorded, status of a running job, which scans
# /proc; logs, --tail and --bytes of an ended job; wait of an ended job,
# and run --wait of `true`, which waits for its end): each beside the same verb of an older binary, and
# beside bgjob --version and a Go hello world (the floor), interleaved
# (bench/cmd/interleave); then again with EXTRA more idle processes on the
# host, which only the running job's status looks at.
#   bash bench/native.sh [OLD_COMMIT] [EXTRA] [ROUNDS]
# (defaults: HEAD~3, 2000, 30)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-HEAD~3} extra=${2:-2000} n=${3:-30}
tmp=$(mktemp -d)
go build -o "$tmp/new" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
git worktree add -q --detach "$tmp/src" "$old"
(cd "$tmp/src" && go build -o "$tmp/old" ./cmd/bgjob)
git worktree remove --force "$tmp/src"
go build -o "$tmp/interleave" ./bench/cmd/interleave
mkdir "$tmp/hello"
printf 'package main\n\nfunc main() { println("hi") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && go mod init hello >/dev/null 2>&1 && go build -o "$tmp/floor" .)
export BGJOB_ROOT=$tmp/root
idle=()
rid=
cleanup() {
	[ ${#idle[@]} = 0 ] || kill "${idle[@]}" 2>/dev/null || true
	[ -z "$rid" ] || "$tmp/new" stop "$rid" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
id=$("$tmp/new" run -q -- 'seq 1 1000; echo err >&2')
sleep 0.5
# The first status records the job's leftovers (two scans).
"$tmp/new" status "$id" >/dev/null
# A running job with group members: its status scans the host.
rid=$("$tmp/new" run -q -- 'sleep 100000 & sleep 100000 & wait')
measure() {
	echo "## $1: $(ls -d /proc/[0-9]* | wc -l) processes, load $(cut -d' ' -f1 /proc/loadavg)"
	"$tmp/interleave" -title "$1" -n "$n" -base floor \
		-c "floor=$tmp/floor" -c "version=$tmp/new --version" \
		-c "status-old=$tmp/old status $id" -c "status-new=$tmp/new status $id" \
		-c "running-old=$tmp/old status $rid" -c "running-new=$tmp/new status $rid" \
		-c "tail-old=$tmp/old logs --tail 10 $id" -c "tail-new=$tmp/new logs --tail 10 $id" \
		-c "logs-old=$tmp/old logs $id" -c "logs-new=$tmp/new logs $id" \
		-c "wait-old=$tmp/old wait $id" -c "wait-new=$tmp/new wait $id" \
		-c "runwait-old=$tmp/old run --wait 3s -- true" -c "runwait-new=$tmp/new run --wait 3s -- true"
}
measure "the host's own processes"
for _ in $(seq "$extra"); do
	sleep 100000 &
	idle+=($!)
done
sleep 0.5
measure "$extra more idle processes"
