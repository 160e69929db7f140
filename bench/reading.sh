#!/usr/bin/env bash
# Latency of ending a follow with its reader and of wait --for, locally and
# over a loopback sshd (docs/benchmarks.md, "Following and waiting").
#   bash bench/reading.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
tmp=$(mktemp -d)
go build -o "$tmp/bgjob" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
go build -o "$tmp/sshd" ./bench/cmd/sshd
"$tmp/sshd" -dir "$tmp" -timeout 10m >"$tmp/sshd.out" 2>&1 &
sshd=$!
trap 'kill $sshd 2>/dev/null; wait $sshd 2>/dev/null; rm -rf "$tmp"' EXIT
until [ -s "$tmp/sshd.out" ]; do sleep 0.1; done
B=$tmp/bgjob
ms() { echo $((($2 - $1) / 1000000)); }
measure() {
	local label=$1
	shift
	local follow=() waitfor=()
	for _ in $(seq "$runs"); do
		"$B" "$@" run -q -n q -- 'echo starting; echo ready; sleep 30' >/dev/null
		"$B" "$@" wait --for ready q >/dev/null
		s=$(date +%s%N)
		"$B" "$@" logs -f q | grep -m1 ready >/dev/null
		follow+=("$(ms "$s" "$(date +%s%N)")")
		"$B" "$@" stop q >/dev/null
		rm -f "$tmp/go"
		"$B" "$@" run -q -n w -- "while [ ! -e '$tmp/go' ]; do sleep 0.01; done; echo ready; sleep 30" >/dev/null
		"$B" "$@" wait --for ready --timeout 20s w >/dev/null &
		w=$!
		sleep 0.5
		s=$(date +%s%N)
		touch "$tmp/go"
		wait $w
		waitfor+=("$(ms "$s" "$(date +%s%N)")")
		"$B" "$@" stop w >/dev/null
	done
	echo "$label: logs -f | grep -m1 (ms): ${follow[*]}"
	echo "$label: wait --for, line arriving (ms from the write): ${waitfor[*]}"
}
measure local --root "$tmp/root"
measure ssh -H bench --ssh-config "$tmp/ssh_config" --root "$tmp/root-ssh"
