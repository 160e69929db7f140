#!/usr/bin/env bash
# bench/eventsssh.sh: what a follow of events over SSH costs the host, and
# how soon it tells. For each of three rounds and each binary:
#
#   idle: events -f on a workspace whose one job has ended, for 20 s
#   (--idle-timeout; IDLE=SECONDS for another length): the host's CPU over the follow, counted as in
#   bench/followssh.sh (the sshd's cgroup as root, else its reaped
#   children), and the sessions the sshd started meanwhile (its log);
#
#   told: events -f while a job started here (same root, no -H) runs for a
#   second: how long after the job's start and end (their times in the
#   events, this machine's clock, as the host is this machine) each event
#   was read.
#
#	bash bench/eventsssh.sh [BGJOB...]   (default: go build ./cmd/bgjob)
#
# ROUNDS=N sets the number of rounds.
#
# Needs openssh-server. With several binaries their rounds are interleaved.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/bgjob-eventsssh.XXXXXX)
hostcg=1
. bench/sshd.sh
bins=("$@")
if [ ${#bins[@]} = 0 ]; then
	go build -o "$tmp/bgjob" ./cmd/bgjob
	bins=("$tmp/bgjob")
fi
g=(--ssh-config "$cfg" -H bench --root "$tmp/root")
if [ -n "$cg" ]; then echo "host CPU: the cgroup $cg"; else echo 'host CPU: the reaped children of the listener'; fi
log=$tmp/ssh/sshd.log
sessions() { grep -c 'Starting session: command' "$log" 2>/dev/null || true; }

# idle BGJOB: the host's CPU and sessions of a 20 s idle follow.
idle() {
	local bg=$1 a b s0 s1 id
	id=$("$bg" --root "$tmp/root" run -q -- true)
	"$bg" --root "$tmp/root" wait "$id" >/dev/null
	a=$(host) s0=$(sessions)
	"$bg" "${g[@]}" events -f --idle-timeout "${IDLE:-20}s" >/dev/null
	sleep 1.2 # the session's last processes end and are reaped
	b=$(host) s1=$(sessions)
	printf '  idle %2d s   host %5.2fs  sessions %d\n' "${IDLE:-20}" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" $((s1 - s0))
}

# told BGJOB: how long after its time each event of a job was read.
told() {
	local bg=$1 out=$tmp/told
	("$bg" "${g[@]}" events -f --json --since 0s --max-events 2 | while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done >"$out") &
	local follower=$!
	sleep 3 # the follow is under way
	"$bg" --root "$tmp/root" run -q -- sleep 1 >/dev/null
	wait "$follower"
	awk '{
		at = $1
		match($0, /"time":"[^"]*"/); t = substr($0, RSTART + 8, RLENGTH - 9)
		match($0, /"event":"[a-z]*"/); e = substr($0, RSTART + 9, RLENGTH - 10)
		cmd = "date -d " t " +%s.%N"; cmd | getline s; close(cmd)
		printf "  told        %-8s %.2fs after\n", e, at - s
	}' "$out"
}

for round in $(seq "${ROUNDS:-3}"); do
	for bg in "${bins[@]}"; do
		echo "round $round, $bg (load $(cut -d' ' -f1 /proc/loadavg)):"
		idle "$bg"
		told "$bg"
	done
done
