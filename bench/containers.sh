#!/usr/bin/env bash
# docker:// and podman:// hosts against the docker CLI's exec, interleaved
# by bench/cmd/interleave: each round runs every command once, in an order
# that rotates from round to round; medians of wall-clock time.
#   bash bench/containers.sh [ROUNDS]     (root; the daemons answering:
#                                          .ci/containers start)
# BENCH_BASE=BINARY adds another bgjob build's verbs (base-status,
# base-run, base-run20) to the same rounds. The fan-out rows take
# max(ROUNDS/2, 5) rounds over 20 containers.
# Needs the image of the container tests (go test -run TestExec
# ./runtime/container imports it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-30}
go build -o /tmp/bgjob-bench ./cmd/bgjob
go build -o "/tmp/bgjob-full" ./cmd/bgjob-full
go build -o /tmp/bgjob-interleave ./bench/cmd/interleave
B=/tmp/bgjob-bench
img=bgjob-test-busybox:1
pid1='trap "exit 0" TERM; while :; do sleep 1000 & wait; done'

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
	base=() base20=()
	if [ -n "${BENCH_BASE-}" ]; then
		base=(-c "base-status=$BENCH_BASE -H $engine://$c status $id" -c "base-run=$BENCH_BASE -H $engine://$c run -q -- true")
		base20=(-c "base-run20=$BENCH_BASE -H ${hosts%,} run -q -- true")
	fi
	uptime
	/tmp/bgjob-interleave -title "$engine" -n "$rounds" -base exec \
		-c "exec=docker exec $c true" \
		-c "status=$B -H $engine://$c status $id" \
		-c "run=$B -H $engine://$c run -q -- true" \
		"${base[@]}"
	uptime
	/tmp/bgjob-interleave -title "$engine, 20 containers" -n $((rounds / 2 > 5 ? rounds / 2 : 5)) -w 1 -base loop20 \
		-c "loop20=sh -c 'for n in ${names[*]}; do docker exec \$n true; done'" \
		-c "run20=$B -H ${hosts%,} run -q -- true" \
		"${base20[@]}"
	uptime
	docker rm -f "${names[@]}" >/dev/null
done
