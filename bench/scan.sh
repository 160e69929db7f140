#!/usr/bin/env bash
# What a look at a running job costs as the host's processes grow: status
# and ls --limit 20 of a running job (one escapee) with the idle processes
# the host has, then with EXTRA more idle processes started before the
# job, then with EXTRA started after it (which the scan's second pass
# must read: their environments could hold the job's id), interleaved
# (bench/cmd/interleave), each beside the same verbs of an older binary;
# and a job_list call in a running `bgjob mcp` of each (bench/cmd/mcplist),
# the host's processes remembered from one call to the next; and
# BenchmarkLook, the look made in Go alone, cold and warm.
#   bash bench/scan.sh [OLD_COMMIT] [EXTRA] [ROUNDS]
# (defaults: HEAD^, 2000, 20)
# With SCAN_SCRIPTS=1 the looks are the scripts' (BGJOB_NATIVE_CHECK=off),
# the ones an SSH host runs, here without the connection's cost.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-HEAD^} extra=${2:-2000} n=${3:-20}
[ "${SCAN_SCRIPTS:-}" != 1 ] || export BGJOB_NATIVE_CHECK=off
tmp=$(mktemp -d)
go build -o "$tmp/new" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
git worktree add -q --detach "$tmp/src" "$old"
(cd "$tmp/src" && go build -o "$tmp/old" ./cmd/bgjob)
git worktree remove --force "$tmp/src"
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/mcplist" ./bench/cmd/mcplist
export BGJOB_ROOT=$tmp/root
idle=()
cleanup() {
	"$tmp/new" stop --all --grace 0 >/dev/null 2>&1 || true
	[ ${#idle[@]} = 0 ] || kill "${idle[@]}" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
spawn() { for _ in $(seq "$extra"); do sleep 100000 & idle+=($!); done; }
joblist() {
	echo "| job_list | median | p25–p75 |"
	echo "|---|--:|--:|"
	"$tmp/mcplist" -n "$((n * 2))" "old=$tmp/old" "new=$tmp/new"
}
measure() {
	local title=$1 id
	id=$("$tmp/new" run -q -- 'setsid sleep 100000 & exec sleep 100000')
	sleep 0.5
	echo "## $title: $(ls -d /proc/[0-9]* | wc -l) processes, load $(cut -d' ' -f1 /proc/loadavg)"
	"$tmp/interleave" -title "$title" -n "$n" -base status-old \
		-c "status-old=$tmp/old status $id" -c "status-new=$tmp/new status $id" \
		-c "ls-old=$tmp/old ls --limit 20" -c "ls-new=$tmp/new ls --limit 20"
	joblist
	"$tmp/new" stop --grace 0 "$id" >/dev/null
}
measure "the host's own processes"
spawn
measure "$extra more idle processes, started before the job"
id=$("$tmp/new" run -q -- 'setsid sleep 100000 & exec sleep 100000')
kill "${idle[@]}" 2>/dev/null || true
idle=()
spawn
sleep 0.5
echo "## $extra more idle processes, started after the job: $(ls -d /proc/[0-9]* | wc -l) processes, load $(cut -d' ' -f1 /proc/loadavg)"
"$tmp/interleave" -title "started after" -n "$n" -base status-old \
	-c "status-old=$tmp/old status $id" -c "status-new=$tmp/new status $id" \
	-c "ls-old=$tmp/old ls --limit 20" -c "ls-new=$tmp/new ls --limit 20"
joblist
# The look made in Go alone, cold (a one-shot call) and warm (a Runtime
# that looked before: the MCP server, top), the idle processes started
# before the benchmark's job, then after it.
go test -c -o "$tmp/local.test" ./runtime/local
echo "## BenchmarkLook, $extra idle processes started before the job"
"$tmp/local.test" -test.run '^$' -test.bench BenchmarkLook -test.benchtime "$((n * 5))x" | grep '^Benchmark'
kill "${idle[@]}" 2>/dev/null || true
idle=()
echo "## BenchmarkLook, $extra idle processes started after the job"
BGJOB_BENCH_AFTER=$extra "$tmp/local.test" -test.run '^$' -test.bench BenchmarkLook -test.benchtime "$((n * 5))x" | grep '^Benchmark'
