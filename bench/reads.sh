#!/usr/bin/env bash
# The reads agents make in loops, on this machine, beside the same verb of
# an older binary and a Go hello world (the floor), interleaved
# (bench/cmd/interleave): logs --new of a running job that has new bytes
# at every read (a setup appends a line, untimed), logs --tail 10 of a
# running job, ls (a page of 20), then ls with EXTRA more idle processes
# on the host.
#   bash bench/reads.sh [OLD_COMMIT] [EXTRA] [ROUNDS]
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
cleanup() {
	[ ${#idle[@]} = 0 ] || kill "${idle[@]}" 2>/dev/null || true
	"$tmp/new" stop --all --grace 0 >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
# A running job whose log a setup appends to before each read.
rid=$("$tmp/new" run -q -- 'seq 1 1000; sleep 100000')
for _ in $(seq 19); do "$tmp/new" run -q -- 'sleep 100000' >/dev/null; done
sleep 0.5
log=$("$tmp/new" status --json "$rid" | sed -n 's/.*"stdout_log":"\([^"]*\)".*/\1/p')
[ -n "$log" ] || log=$BGJOB_ROOT/default/$rid/stdout.log
grow="sh -c 'echo more >>$log'"
measure() {
	echo "## $1: $(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes, load $(cut -d' ' -f1 /proc/loadavg)"
	"$tmp/interleave" -title "$1" -n "$n" -base floor \
		-setup "new-old=$grow" -setup "new-new=$grow" \
		-c "floor=$tmp/floor" -c "version=$tmp/new --version" \
		-c "new-old=$tmp/old logs --new --reader o $rid" -c "new-new=$tmp/new logs --new --reader n $rid" \
		-c "tail-old=$tmp/old logs --tail 10 $rid" -c "tail-new=$tmp/new logs --tail 10 $rid" \
		-c "ls-old=$tmp/old ls --limit 20" -c "ls-new=$tmp/new ls --limit 20"
}
measure "the host's own processes"
for _ in $(seq "$extra"); do
	sleep 100000 &
	idle+=($!)
done
sleep 0.5
measure "$extra more idle processes"
