#!/usr/bin/env bash
# bench/attach.sh: the typing latency of bgjob attach (issue 24), on this
# machine and over SSH to a loopback sshd, and the CPU of an attach while
# it is idle: the client's (attach and its children) and the host side's
# (everything under the loopback sshd):
#
#	bash bench/attach.sh [BGJOB]
#
# BGJOB is the bgjob binary to measure (default: go build ./cmd/bgjob), e.g.
# one built from an earlier revision for a before and after.
# The job is a --pty job that echoes each byte at once; bench/cmd/attachlat
# runs attach on a pty of its own, types ATTACH_KEYS (default 100) keys
# ATTACH_GAP apart (default 100ms) and times each from its write to its
# echo on attach's output, then leaves attach idle for ATTACH_IDLE
# (default 20s). Needs util-linux script and, for the SSH half, openssh-server.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
keys=${ATTACH_KEYS:-100}
gap=${ATTACH_GAP:-100ms}
idle=${ATTACH_IDLE:-20s}

tmp=$(mktemp -d /tmp/bgjob-attach.XXXXXX)
sshd_pid=
cleanup() {
	set +e
	bgjob --root "$tmp/root" stop --all --grace 0 >/dev/null 2>&1
	[ -n "$sshd_pid" ] && bgjob -H bench --ssh-config "$tmp/ssh/ssh_config" --root "$tmp/root-ssh" stop --all --grace 0 >/dev/null 2>&1
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/bin" "$tmp/ssh"
if [ -n "${1:-}" ]; then
	cp "$1" "$tmp/bin/bgjob"
else
	go build -o "$tmp/bin/bgjob" ./cmd/bgjob
	go build -o "$tmp/bin/bgjob-full" ./cmd/bgjob-full
fi
go build -o "$tmp/attachlat" ./bench/cmd/attachlat
go build -o "$tmp/sshd" ./bench/cmd/sshd
export PATH=$tmp/bin:$PATH SSH_AUTH_SOCK=
unset BGJOB_HOST BGJOB_WORKSPACE BGJOB_ROOT BGJOB_SSH_CONFIG

echo_job='stty raw -echo; while :; do dd bs=1 count=1 2>/dev/null; done'
lat() {
	"$tmp/attachlat" -n "$keys" -gap "$gap" -idle "$idle" "$@"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
local=(--root "$tmp/root")
id=$(bgjob "${local[@]}" run -q --pty -- "$echo_job")
lat -label local -- bgjob "${local[@]}" attach "$id"
bgjob "${local[@]}" stop --grace 0 "$id" >/dev/null

if ! command -v sshd >/dev/null && ! [ -x /usr/sbin/sshd ]; then
	echo "ssh: skipped (no sshd: apt-get install openssh-server)"
	exit 0
fi
"$tmp/sshd" -dir "$tmp/ssh" -timeout 20m >"$tmp/ssh/path" 2>"$tmp/ssh/err" &
sshd_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/ssh/path" ] && break
	sleep 0.1
done
ssh=(-H bench --ssh-config "$(cat "$tmp/ssh/path")" --root "$tmp/root-ssh")
id=$(bgjob "${ssh[@]}" run -q --pty -- "$echo_job")
lat -label ssh -host "$sshd_pid" -- bgjob "${ssh[@]}" attach "$id"
bgjob "${ssh[@]}" stop --grace 0 "$id" >/dev/null
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
