#!/usr/bin/env bash
# bench/grace.sh BGJOB: --grace and --timeout by the clock, with IDLE (300)
# extra idle processes on the host, with hyperfine: stop --grace 1s of a
# job that ignores TERM (started afresh before each run), and run
# --timeout 1s --grace 1s of one, then wait for it (exit 137). The targets
# (docs/benchmarks.md) are 1 s and 2 s, within 0.3 s. Build it first:
#   go build -o /tmp/bgjob ./cmd/bgjob
# Knobs: R (runs, 10), IDLE (idle processes, 300).
set -eu
bg=$1
tmp=$(mktemp -d /tmp/bgjob-grace.XXXXXX)
root=$tmp/root
mkdir -m 700 "$root"
export BGJOB_ROOT=$root
for _ in $(seq "${IDLE:-300}"); do sleep 3600 & done
trap 'kill $(jobs -p) 2>/dev/null; "$bg" stop --all --grace 0 >/dev/null 2>&1; rm -rf "$tmp"' EXIT
echo "processes on the host: $(ps -A -o pid= | wc -l)"
# A job that ignores TERM; the stop must find its trap set, so the
# prepare step waits for its line.
cat >"$tmp/start" <<END
#!/bin/sh
n=\$1
shift
"$bg" run -q -n "\$n" "\$@" -- 'trap "" TERM; echo ready; sleep 60' >/dev/null
END
chmod +x "$tmp/start"
hyperfine -N -r "${R:-10}" --prepare "sh -c '$tmp/start st && $bg wait --for ready st'" "$bg stop --grace 1s st"
hyperfine -i -r "${R:-10}" "$tmp/start to --timeout 1s --grace 1s; $bg wait to"
