#!/usr/bin/env bash
# docker exec against two bgjob builds' run on one container, in rounds
# whose order rotates; prints the medians and the medians of the rounds'
# own differences and ratios, which a busy machine's swings move less.
#   bash bench/containerpair.sh BASE_BINARY [ROUNDS] [CONTAINER]
# (root; the daemons answering: .ci/containers start). Builds this tree;
# CONTAINER must be running (a busybox one: see bench/containers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1 n=${2:-60} c=${3:-bgjob-bench-1}
go build -o /tmp/bgjob-bench ./cmd/bgjob
go build -o "/tmp/bgjob-full" ./cmd/bgjob-full
out=$(mktemp)
trap 'rm -f "$out"' EXIT
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) * 1000 }'; }
for i in $(seq "$n"); do
	t=(0 0 0)
	for k in 0 1 2; do
		j=$(((k + i) % 3))
		t0=$EPOCHREALTIME
		case $j in
		0) docker exec "$c" true ;;
		1) /tmp/bgjob-bench -H "docker://$c" run -q -- true >/dev/null ;;
		2) "$base" -H "docker://$c" run -q -- true >/dev/null ;;
		esac
		t[j]=$(ms "$t0" "$EPOCHREALTIME")
	done
	echo "${t[*]}" >>"$out"
done
python3 - "$out" <<'PY'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
e, r, b = ([x[i] for x in rows] for i in range(3))
m = st.median
print(f"{len(rows)} rounds: exec {m(e):.1f} ms, run {m(r):.1f} ms ({m(r)/m(e):.2f}x), base run {m(b):.1f} ms ({m(b)/m(e):.2f}x)")
print(f"per round, medians: run-exec {m([x-y for x, y in zip(r, e)]):+.1f} ms, base-exec {m([x-y for x, y in zip(b, e)]):+.1f} ms, run-base {m([x-y for x, y in zip(r, b)]):+.1f} ms; run/exec {m([x/y for x, y in zip(r, e)]):.3f}, base/exec {m([x/y for x, y in zip(b, e)]):.3f}")
PY
