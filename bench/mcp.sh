#!/usr/bin/env bash
# A job_start call inside a running `bgjob mcp` against `nq true` and
# `bgjob run` from the shell, interleaved, locally and over a loopback sshd
# (docs/benchmarks.md, "MCP").
#   bash bench/mcp.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-40}
command -v nq >/dev/null 2>&1 || {
	echo "bench: error: nq is missing (apt-get install nq)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/bgjob-bench-mcp.XXXXXX)
go build -o "$tmp/bgjob" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
go build -o "$tmp/sshd" ./bench/cmd/sshd
go build -o "$tmp/mcpstart" ./bench/cmd/mcpstart
"$tmp/sshd" -dir "$tmp" -timeout 10m >"$tmp/sshd.out" 2>&1 &
sshd=$!
trap 'kill $sshd 2>/dev/null; wait $sshd 2>/dev/null; rm -rf "$tmp"' EXIT
until [ -s "$tmp/sshd.out" ]; do sleep 0.1; done
mkdir -p "$tmp/root" "$tmp/nq"
chmod 700 "$tmp/root"
export BGJOB_ROOT=$tmp/root NQDIR=$tmp/nq SSH_AUTH_SOCK=
unset BGJOB_HOST BGJOB_WORKSPACE BGJOB_SSH_CONFIG
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$tmp/mcpstart" -bgjob "$tmp/bgjob" -n "$rounds" -ssh-config "$tmp/ssh_config" -host bench
