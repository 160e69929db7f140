#!/usr/bin/env bash
# docker:// and podman:// hosts against the docker CLI's exec, interleaved:
# each round runs every command once, in turn; medians of wall-clock time.
#   bash bench/containers.sh [ROUNDS]     (root; the daemons answering:
#                                          .ci/containers start)
# BENCH_BASE=BINARY adds the verbs of another bgjob build (base-status,
# base-run, base-run20), interleaved with this tree's.
# Needs the image of the container tests (go test -run TestExec
# ./runtime/container imports it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-30}
go build -o /tmp/bgjob-bench ./cmd/bgjob
B=/tmp/bgjob-bench
img=bgjob-test-busybox:1
pid1='trap "exit 0" TERM; while :; do sleep 1000 & wait; done'
ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for engine in docker podman; do
	if [ $engine = podman ]; then
		export DOCKER_HOST=unix:///run/podman/podman.sock
		ul=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
	else
		unset DOCKER_HOST
		ul=()
	fi
	names=()
	for i in $(seq 20); do
		names+=("bgjob-bench-$i")
		docker run -d --name "bgjob-bench-$i" --network none "${ul[@]}" $img sh -c "$pid1" >/dev/null
	done
	c=${names[0]}
	id=$($B -H "$engine://$c" run -q -- true)
	hosts=$(printf "$engine://%s," "${names[@]}")
	: >/tmp/bgjob-bench.t
	for _ in $(seq "$rounds"); do
		t=$(ms); docker exec "$c" true; echo "exec $(($(ms) - t))" >>/tmp/bgjob-bench.t
		t=$(ms); $B -H "$engine://$c" status "$id" >/dev/null; echo "status $(($(ms) - t))" >>/tmp/bgjob-bench.t
		t=$(ms); $B -H "$engine://$c" run -q -- true >/dev/null; echo "run $(($(ms) - t))" >>/tmp/bgjob-bench.t
		if [ -n "${BENCH_BASE-}" ]; then
			t=$(ms); $BENCH_BASE -H "$engine://$c" status "$id" >/dev/null; echo "base-status $(($(ms) - t))" >>/tmp/bgjob-bench.t
			t=$(ms); $BENCH_BASE -H "$engine://$c" run -q -- true >/dev/null; echo "base-run $(($(ms) - t))" >>/tmp/bgjob-bench.t
		fi
	done
	for _ in $(seq 5); do
		t=$(ms); for n in "${names[@]}"; do docker exec "$n" true; done; echo "loop20 $(($(ms) - t))" >>/tmp/bgjob-bench.t
		t=$(ms); $B -H "$hosts" run -q -- true >/dev/null; echo "run20 $(($(ms) - t))" >>/tmp/bgjob-bench.t
		if [ -n "${BENCH_BASE-}" ]; then
			t=$(ms); $BENCH_BASE -H "$hosts" run -q -- true >/dev/null; echo "base-run20 $(($(ms) - t))" >>/tmp/bgjob-bench.t
		fi
	done
	uptime
	for m in exec status run loop20 run20 ${BENCH_BASE:+base-status base-run base-run20}; do
		echo "$engine $m $(awk -v m=$m '$1 == m {print $2}' /tmp/bgjob-bench.t | median) ms"
	done
	docker rm -f "${names[@]}" >/dev/null
done
