#!/usr/bin/env bash
# bench/stop.sh BGJOB FABRICATE: the stop and prune targets of
# docs/benchmarks.md with hyperfine: stop --all over 100 ended jobs,
# prune --keep 0 of 300 ended jobs (fabricated afresh before each run) and
# stop --all --grace 1s of 10 running jobs that ignore TERM (started
# afresh before each run). Build the two first:
#   go build -o /tmp/bgjob ./cmd/bgjob; go build -o /tmp/fabricate ./bench/cmd/fabricate
# Knobs: R (runs of the first two, 5), R2 (runs of the third, 3).
set -eu
bg=$1 fab=$2
tmp=$(mktemp -d /tmp/bgjob-stop.XXXXXX)
root=$tmp/root
mkdir -m 700 "$root"
export BGJOB_ROOT=$root
trap '"$bg" -w t10 stop --all --grace 0 >/dev/null 2>&1; rm -rf "$tmp"' EXIT
"$fab" -root "$root" -w s100 -n 100 -lines 1 >/dev/null
hyperfine -N -w 1 -r "${R:-5}" "$bg -w s100 stop --all"
hyperfine -N -r "${R:-5}" --prepare "sh -c 'rm -rf $root/p300; $fab -root $root -w p300 -n 300 -lines 1 >/dev/null'" "$bg -w p300 prune --keep 0"
start="for i in 0 1 2 3 4 5 6 7 8 9; do $bg -w t10 run -q -- sh -c \"trap \\\"\\\" TERM; sleep 60\" >/dev/null; done"
hyperfine -r "${R2:-3}" --prepare "sh -c '$start'" "$bg -w t10 stop --all --grace 1s"
