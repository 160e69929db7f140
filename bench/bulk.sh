#!/usr/bin/env bash
# bench/bulk.sh OLD NEW FABRICATE: rm (by id), prune --keep 0 and stop
# --all of 300 ended jobs (issue 44), two bgjob binaries alternating, each
# run on a fresh copy of the same jobs: fabricated ones, and with REAL=1
# also 300 of `run -q -- true` (as they end: no leftovers record) and the
# same after two looks (`ls`) recorded that they left no processes. Times
# by /usr/bin/time, in seconds (hyperfine's --prepare would copy the jobs
# inside the timing's neighbourhood all the same). Build them first:
#   go build -o /tmp/bgjob ./cmd/bgjob; go build -o /tmp/fabricate ./bench/cmd/fabricate
# Knobs: R (runs of each, 3), BUSY (busy loops beside, 0).
set -eu
old=$1 new=$2 fab=$3
tmp=$(mktemp -d /tmp/bgjob-bulk.XXXXXX)
loops=
cleanup() {
	# shellcheck disable=SC2086 # the pids are words on purpose
	[ -z "$loops" ] || kill $loops
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -m 700 "$tmp/fab"
"$fab" -root "$tmp/fab" -w w -n 300 -lines 1 >/dev/null
sets=fab
if [ "${REAL:-0}" = 1 ]; then
	mkdir -m 700 "$tmp/real"
	for _ in $(seq 300); do "$new" --root "$tmp/real" -w w run -q -- true >/dev/null; done
	while [ "$(find "$tmp/real/w" -name exit_code | wc -l)" -lt 300 ]; do sleep 1; done
	cp -a "$tmp/real" "$tmp/left"
	for _ in 1 2; do
		"$new" --root "$tmp/left" -w w ls --limit 0 >/dev/null
		sleep 1
	done
	sets="fab real left"
fi
for _ in $(seq "${BUSY:-0}"); do
	sh -c 'while :; do :; done' &
	loops="$loops $!"
done
echo "load: $(uptime)"
for verb in rm prune stop; do
	for set in $sets; do
		for bin in old new; do
			b=$new
			[ "$bin" = new ] || b=$old
			printf '%s %s %s:' "$verb" "$set" "$bin"
			for _ in $(seq "${R:-3}"); do
				rm -rf "$tmp/run"
				cp -a "$tmp/$set" "$tmp/run"
				case $verb in
				rm)
					# shellcheck disable=SC2046 # the ids are words on purpose
					set -- rm $(ls "$tmp/run/w")
					;;
				prune) set -- prune --keep 0 ;;
				stop) set -- stop --all ;;
				esac
				/usr/bin/time -f %e -o "$tmp/t" "$b" --root "$tmp/run" -w w --host-timeout 0 "$@" >/dev/null 2>&1 || :
				printf ' %s' "$(cat "$tmp/t")"
			done
			echo
		done
	done
done
echo "load: $(uptime)"
