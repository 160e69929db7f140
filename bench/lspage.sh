#!/usr/bin/env bash
# ls --limit 20 (one page) at 10 and at 10,000 jobs in a workspace (issue
# 44: the page at 10,000 at most 1.5x of the page at 10), and
# `ls --limit 0` of all 10,000, an older binary's and this tree's,
# interleaved (bench/cmd/interleave); peak RSS of `ls --limit 0` by
# /usr/bin/time. Fabricated ended jobs (bench/cmd/fabricate).
#   bash bench/lspage.sh [OLD_COMMIT] [ROUNDS]
# (defaults: HEAD~1, 100)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-HEAD~1} n=${2:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/new" ./cmd/bgjob
git worktree add -q --detach "$tmp/src" "$old"
(cd "$tmp/src" && CGO_ENABLED=0 go build -o "$tmp/old" ./cmd/bgjob)
git worktree remove --force "$tmp/src"
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/fabricate" ./bench/cmd/fabricate
mkdir -m 700 "$tmp/root"
for w in 10 10000; do "$tmp/fabricate" -root "$tmp/root" -w "n$w" -n "$w" >/dev/null; done
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD) against $old, load average $(cut -d' ' -f1-3 /proc/loadavg)"
r="--root $tmp/root"
"$tmp/interleave" -title "ls --limit 20 at 10 and 10,000 jobs" -n "$n" -w 5 -base new-10 \
	-c "old-10=$tmp/old $r -w n10 ls --limit 20" \
	-c "old-10000=$tmp/old $r -w n10000 ls --limit 20" \
	-c "new-10=$tmp/new $r -w n10 ls --limit 20" \
	-c "new-10000=$tmp/new $r -w n10000 ls --limit 20" \
	-c "old-all=$tmp/old $r -w n10000 ls --limit 0" \
	-c "new-all=$tmp/new $r -w n10000 ls --limit 0" \
	-target "new-10000 / new-10 <= 1.5"
for b in old new; do
	/usr/bin/time -f "$b ls --limit 0 of 10,000: %e s, %M KiB" "$tmp/$b" $r -w n10000 ls --limit 0 >/dev/null
done
