#!/usr/bin/env bash
# What a launch costs: `bgjob run -q -- true` of an older binary and of
# this tree beside `nq true`, `bgjob --version` and a Go hello world (the
# floor), interleaved (bench/cmd/interleave), with the job root on /tmp
# (the default root's file system) and on a tmpfs (/dev/shm: what is left
# without the disk's file creations); then MCP job_start inside a running
# `bgjob mcp` of each binary (bench/cmd/mcpstart).
#   bash bench/launch.sh [OLD_COMMIT] [ROUNDS]
# (defaults: HEAD~3, 40). Needs nq and a tmpfs at /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
# Static binaries, as task build and the release make them.
export CGO_ENABLED=0
old=${1:-HEAD~3} n=${2:-40}
command -v nq >/dev/null 2>&1 || {
	echo "bench: error: nq is missing (apt-get install nq)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/bgjob-bench-launch.XXXXXX)
shm=$(mktemp -d /dev/shm/bgjob-bench-launch.XXXXXX)
trap 'rm -rf "$tmp" "$shm"' EXIT
go build -o "$tmp/new" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
git worktree add -q --detach "$tmp/src" "$old"
(cd "$tmp/src" && go build -o "$tmp/old" ./cmd/bgjob)
git worktree remove --force "$tmp/src"
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/mcpstart" ./bench/cmd/mcpstart
go build -o "$tmp/floor" ./bench/cmd/hello
mkdir -p "$tmp/nq" "$shm/nq"
unset BGJOB_HOST BGJOB_WORKSPACE BGJOB_SSH_CONFIG BGJOB_ROOT
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD) against $(git rev-parse --short "$old"), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for fs in "$tmp" "$shm"; do
	"$tmp/interleave" -title "run, root under $fs" -n "$n" -base nq \
		-c "old=$tmp/old --root $fs/ro run -q -- true" -c "new=$tmp/new --root $fs/rn run -q -- true" \
		-c "nq=NQDIR=$fs/nq nq true" -c "version=$tmp/new --version" -c "floor=$tmp/floor"
done
for b in old new; do
	echo "## job_start, $b"
	BGJOB_ROOT=$tmp/m$b NQDIR=$tmp/nq "$tmp/mcpstart" -bgjob "$tmp/$b" -n "$n"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
