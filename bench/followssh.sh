#!/usr/bin/env bash
# bench/followssh.sh: the CPU of following, and of waiting for, a job over
# SSH, on both sides: bgjob's (and its children's) on the caller, and the
# host's, counted as the CPU of the loopback sshd's finished children (a
# session's processes are reaped by their parents up to the listener, so
# its cutime and cstime grow by what the session used; the job itself is
# in a session of its own and is not counted); where bench/sshd.sh can
# make a cgroup for the sshd (hostcg), the CPU of all the sshd's processes,
# the jobs started on this machine, outside it. For each of three rounds:
# logs -f and wait --for of a job that prints 20 lines a second for 5 s,
# then the same of a quiet job (sleep 5), then wait of a quiet job.
#
#	bash bench/followssh.sh [BGJOB...]   (default: go build ./cmd/bgjob)
#
# Needs openssh-server. With several binaries their rounds are interleaved.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/bgjob-followssh.XXXXXX)
hostcg=1
. bench/sshd.sh
bins=("$@")
if [ ${#bins[@]} = 0 ]; then
	go build -o "$tmp/bgjob" ./cmd/bgjob
	go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
	bins=("$tmp/bgjob")
fi
g=(--ssh-config "$cfg" -H bench --root "$tmp/root")
if [ -n "$cg" ]; then echo "host CPU: the cgroup $cg"; else echo 'host CPU: the reaped children of the listener'; fi

. bench/cpu.sh
# measure BGJOB LABEL JOB VERB...: start JOB, then run VERB on it and
# print the CPU on both sides.
measure() {
	local bg=$1 label=$2 job=$3 id a b here
	shift 3
	# Started here (the same root): a job started over SSH is in the
	# sshd's cgroup.
	id=$("$bg" --root "$tmp/root" run -q -- "$job")
	sleep 0.3
	a=$(host)
	here=$(cpu "$bg" "${g[@]}" "$@" "$id")
	sleep 1.2 # the session's last processes end (the ticker's second) and are reaped
	b=$(host)
	printf '  %-22s caller %5.2fs  host %5.2fs\n' "$label" "$here" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')"
}
chatty='i=0; while [ $i -lt 100 ]; do echo "line $i"; i=$((i+1)); sleep 0.05; done; echo READY'
quiet='sleep 5; echo READY'
for round in 1 2 3; do
	for bg in "${bins[@]}"; do
		echo "round $round, $bg (load $(cut -d' ' -f1 /proc/loadavg)):"
		measure "$bg" "logs -f, chatty" "$chatty" logs -f
		measure "$bg" "wait --for, chatty" "$chatty" wait --for READY --timeout 60s
		measure "$bg" "logs -f, quiet" "$quiet" logs -f
		measure "$bg" "wait --for, quiet" "$quiet" wait --for READY --timeout 60s
		measure "$bg" "wait, quiet" "$quiet" wait
	done
done
