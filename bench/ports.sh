#!/usr/bin/env bash
# What ports cost a look (docs/benchmarks.md): status of a running job
# that listens on a TCP port beside that of a running job that listens on
# none (the target: at most 1.2x), each beside the same status of an
# older binary, which looked for no port (and made the look in Go), and
# ls --json of the two jobs; interleaved (bench/cmd/interleave).
#   bash bench/ports.sh [OLD_COMMIT] [ROUNDS]
# (defaults: HEAD~10, 40)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-HEAD~10} n=${2:-40}
tmp=$(mktemp -d)
go build -o "$tmp/new" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
mkdir "$tmp/src"
git archive "$old" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go build -o "$tmp/old" ./cmd/bgjob)
go build -o "$tmp/interleave" ./bench/cmd/interleave
export BGJOB_ROOT=$tmp/root
cleanup() {
	"$tmp/new" stop --all >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
py=$(command -v python3)
web=$("$tmp/new" run -q --port auto --ready-port any -- "$py" -c 'import os, socket, time; s = socket.socket(); s.bind(("127.0.0.1", int(os.environ["PORT"]))); s.listen(); time.sleep(100000)')
quiet=$("$tmp/new" run -q -- "$py" -c 'import time; time.sleep(100000)')
echo "## ports: $(ls -d /proc/[0-9]* | wc -l) processes, load $(cut -d' ' -f1 /proc/loadavg)"
"$tmp/interleave" -title "ports" -n "$n" -base quiet-new \
	-c "quiet-new=$tmp/new status $quiet" -c "web-new=$tmp/new status $web" \
	-c "quiet-old=$tmp/old status $quiet" -c "web-old=$tmp/old status $web" \
	-c "ls-json-new=$tmp/new ls --json" -c "ls-json-old=$tmp/old ls --json" \
	-target 'web-new / quiet-new <= 1.2'
