#!/usr/bin/env bash
# bench/ssh-cm.sh: the ControlMaster group of bench/run.sh alone, and, given
# a git revision, the same verbs of that revision's bgjob interleaved in the
# same rounds (an A/B of the SSH path):
#
#	bash bench/ssh-cm.sh [BASE_REV]
#
# Needs openssh-server and openssh-client. BENCH_ROUNDS (default 40) sets
# the rounds. The bgjob cache (ssh -G answers) lives in a fresh
# XDG_CACHE_HOME, so the first warm-up round fills it. status-no-cache
# runs with XDG_CACHE_HOME=/dev/null (no cache can be written: ssh -G every
# time), status-parser with no ssh on PATH (the built-in parser); go-floor
# is bgjob printing its help, the cost of starting the binary.
#
# Every command must go through the master: "ssh -S" with a master that is
# gone (or that sshd refuses a session, MaxSessions) silently makes a new
# connection and exits 0, and so does bgjob (2026-12-04: a baseline of
# 220 ms that was a full handshake). The baseline carries
# -o ProxyCommand=false, which only that fallback runs, so it fails
# instead; and the run fails when sshd accepted any connection after the
# master's, or when the master is gone at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/usr/local/go/bin:$PATH
rounds=${BENCH_ROUNDS:-40}
base=${1:-}

tmp=$(mktemp -d /tmp/bgjob-sshcm.XXXXXX)
sshd_pid=
cleanup() {
	set +e
	[ -S "$tmp/cm.sock" ] && ssh -F "$cfg" -S "$tmp/cm.sock" -O exit bench-cm >/dev/null 2>&1
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/bin" "$tmp/root" "$tmp/ssh" "$tmp/cache"
chmod 700 "$tmp/root"
go build -o "$tmp/bin/bgjob" ./cmd/bgjob
go build -o "$tmp/bin/bgjob-full" ./cmd/bgjob-full
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/fabricate" ./bench/cmd/fabricate
go build -o "$tmp/sshd" ./bench/cmd/sshd
if [ -n "$base" ]; then
	mkdir "$tmp/base"
	git archive "$base" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/bin/bgjob-base" ./cmd/bgjob)
fi
export PATH=$tmp/bin:$PATH BGJOB_ROOT=$tmp/root XDG_CACHE_HOME=$tmp/cache SSH_AUTH_SOCK=
unset BGJOB_HOST BGJOB_WORKSPACE
id=$("$tmp/fabricate" -root "$tmp/root" -w n10 -n 10)

"$tmp/sshd" -dir "$tmp/ssh" -control "$tmp/cm.sock" -timeout 20m >"$tmp/ssh/path" 2>"$tmp/ssh/err" &
sshd_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/ssh/path" ] && break
	sleep 0.1
done
cfg=$(cat "$tmp/ssh/path")
export BGJOB_SSH_CONFIG=$cfg
ssh -F "$cfg" -M -S "$tmp/cm.sock" -fN bench-cm
accepted() { grep -c '^Accepted publickey' "$tmp/ssh/sshd.log"; }
conns=$(accepted)

cmds=(
	-c "ssh-S=ssh -F $cfg -S $tmp/cm.sock -o ProxyCommand=false bench-cm true"
	-c "ssh-G=ssh -G -F $cfg bench-cm"
	-c "status=bgjob -H bench-cm -w n10 status $id"
	-c "run=bgjob -H bench-cm -w sshrun run -q -- true"
	-c "logs=bgjob -H bench-cm -w n10 logs --tail 100 $id"
	-c "ls=bgjob -H bench-cm -w n10 ls --limit 20"
	-c "go-floor=bgjob --help"
	-c "status-no-cache=XDG_CACHE_HOME=/dev/null bgjob -H bench-cm -w n10 status $id"
	-c "status-parser=PATH=/nonexistent $tmp/bin/bgjob -H bench-cm -w n10 status $id"
)
if [ -n "$base" ]; then
	cmds+=(
		-c "base-status=bgjob-base -H bench-cm -w n10 status $id"
		-c "base-run=bgjob-base -H bench-cm -w sshrun run -q -- true"
		-c "base-logs=bgjob-base -H bench-cm -w n10 logs --tail 100 $id"
		-c "base-ls=bgjob-base -H bench-cm -w n10 ls --limit 20"
	)
fi
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)${base:+, base $base}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "load average at the end $(cut -d" " -f1-3 /proc/loadavg)"; cleanup' EXIT
"$tmp/interleave" -title "Over a live OpenSSH ControlMaster socket" -n "$rounds" -w 3 -base ssh-S "${cmds[@]}" \
	-target "status / ssh-S <= 1.2" -target "run / ssh-S <= 1.2" -target "logs / ssh-S <= 1.2" -target "ls / ssh-S <= 1.2"
if ! ssh -F "$cfg" -S "$tmp/cm.sock" -O check bench-cm 2>/dev/null; then
	echo "ssh-cm.sh: error: the ControlMaster died during the run: the times above are not over it" >&2
	exit 1
fi
if [ "$(accepted)" != "$conns" ]; then
	echo "ssh-cm.sh: error: sshd accepted $(($(accepted) - conns)) connections besides the master's: some commands did not go through it" >&2
	exit 1
fi
