#!/usr/bin/env bash
# bench/fleet.sh: bgjob against parallel-ssh and pdsh on a simulated fleet
# of N hosts (bench/cmd/fleet: sshd in pid, mount and UTS namespaces on
# 127.0.2.I, then 127.0.3.I...), same hosts, same parallelism (32), interleaved. Run as root
# (the fleet needs unshare); it installs pssh, pdsh, openssh and GNU time
# with apt-get when missing. docs/benchmarks.md holds the latest table.
#
# Environment (all optional):
#   BENCH_OUT            directory for the results (default bench/out)
#   BENCH_FLEET_SIZES    fleet sizes, one run each (default "100 250"; at
#                        most 1016: four loopback /24s)
#   BENCH_FLEET_ROUNDS   interleaved rounds per size (default 7)
#   BENCH_FLEET_PDSH     0: leave pdsh out (it takes as long as parallel-ssh)
#
# Results: $BENCH_OUT/fleet.md.
set -euo pipefail
trap 'printf "bench: error: line %s failed (exit %s)\n" "$LINENO" "$?" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/usr/local/go/bin:$PATH

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

sizes=${BENCH_FLEET_SIZES:-100 250}
rounds=${BENCH_FLEET_ROUNDS:-7}
pdsh=1
[ "${BENCH_FLEET_PDSH:-1}" != 0 ] || pdsh=
out=${BENCH_OUT:-$repo/bench/out}

[ "$(id -u)" = 0 ] || die "the simulated fleet needs root (unshare)"
need=()
command -v parallel-ssh >/dev/null 2>&1 || need+=(pssh)
command -v pdsh >/dev/null 2>&1 || need+=(pdsh)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/bin/time ] || need+=(time)
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v hostname >/dev/null 2>&1 || need+=(hostname)
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Not under /tmp: every simulated host mounts its own tmpfs there.
tmp=$(mktemp -d /var/tmp/bgjob-fleet-bench.XXXXXX)
fleet_pid=
cleanup() {
	set +e
	[ -n "$fleet_pid" ] && kill "$fleet_pid" 2>/dev/null && wait "$fleet_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

rev=$(git -C "$repo" rev-parse --short HEAD)
say "building bgjob and the harness tools into $tmp"
go build -o "$tmp/bgjob" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/fleet" ./bench/cmd/fleet
mkdir -p "$out"
md=$out/fleet.md
{
	echo "# bgjob on a simulated fleet"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start,"
	echo "$(nproc) cores, $(uname -sr), $(ssh -V 2>&1), $(parallel-ssh --version 2>&1 | head -1 | sed 's/^/parallel-ssh /'), $(pdsh -V 2>&1 | head -1)."
	echo
} >"$md"
export SSH_AUTH_SOCK=

# cost LABEL CMD...: one run of CMD, then a table row of the CPU seconds
# it took itself (user+system, GNU time) and what the rest of the machine
# spent meanwhile (the hosts' sshd and shells: every core's busy time in
# /proc/stat, less the command's own).
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
cost() {
	local label=$1 b0 b1 self tck
	shift
	tck=$(getconf CLK_TCK)
	b0=$(busy)
	/usr/bin/time -o "$tmp/cost" -f '%U %S' "$@" >/dev/null 2>&1
	self=$(tail -1 "$tmp/cost")
	b1=$(busy)
	awk -v l="$label" -v s="$self" -v b0="$b0" -v b1="$b1" -v t="$tck" 'BEGIN{split(s, a, " "); me=a[1]+a[2]; all=(b1-b0)/t; printf "| %s | %.2f s | %.2f s |\n", l, me, all-me}'
}

for n in $sizes; do
	d=$tmp/fleet-$n
	mkdir -p "$d"
	say "starting $n hosts"
	"$tmp/fleet" -n "$n" -dir "$d" -timeout 30m >"$d/out" 2>"$d/err" &
	fleet_pid=$!
	for _ in $(seq 600); do [ -s "$d/out" ] && break; sleep 0.1; done
	[ -s "$d/out" ] || die "the fleet did not start: $(cat "$d/err")"
	cfg=$(cat "$d/out")
	export BGJOB_SSH_CONFIG=$cfg
	id=$("$tmp/bgjob" -H "@$d/hosts" run -q -- true)
	pdsh_row=()
	[ -z "$pdsh" ] || pdsh_row=(-c "pdsh=PDSH_RCMD_TYPE=ssh PDSH_SSH_ARGS='-F $cfg %h' pdsh -f 32 -w ^$d/hosts true")
	"$tmp/interleave" -md "$md" -title "$n hosts, parallelism 32" -n "$rounds" -w 1 -base parallel-ssh \
		-c "bgjob run=$tmp/bgjob -H @$d/hosts run -q -- true" \
		-c "bgjob status=$tmp/bgjob -H @$d/hosts status $id" \
		-c "bgjob ls=$tmp/bgjob -H @$d/hosts ls" \
		-c "bgjob wait=$tmp/bgjob -H @$d/hosts wait $id" \
		-c "bgjob stop --all=$tmp/bgjob -H @$d/hosts stop --all" \
		-c "parallel-ssh=parallel-ssh -h $d/hosts -p 32 -x '-F $cfg' true" \
		"${pdsh_row[@]}" \
		-target "bgjob run / parallel-ssh <= 0.5" \
		-target "bgjob ls / parallel-ssh <= 0.5" \
		-target "bgjob wait / parallel-ssh <= 0.5" \
		-target "bgjob stop --all / parallel-ssh <= 0.5" >&2
	{
		printf '\nCPU of one call at %s hosts: the caller, and the rest of the machine (the hosts)\n\n' "$n"
		printf '| call | caller | hosts |\n|---|--:|--:|\n'
		cost "bgjob run" "$tmp/bgjob" -H "@$d/hosts" run -q -- true
		cost "bgjob ls" "$tmp/bgjob" -H "@$d/hosts" ls
		cost "bgjob stop --all" "$tmp/bgjob" -H "@$d/hosts" stop --all
		cost "parallel-ssh" parallel-ssh -h "$d/hosts" -p 32 -x "-F $cfg" true
	} >>"$md"
	{
		printf '\npeak RSS of bgjob at %s hosts (target < 64 MB):' "$n"
		for verb in "run -q -- true" "status $id" "ls" "wait $id" "stop --all"; do
			# shellcheck disable=SC2086 # the verb's words
			rss=$(/usr/bin/time -f %M "$tmp/bgjob" -H "@$d/hosts" $verb 2>&1 >/dev/null | tail -1)
			printf ' %s %s KB;' "${verb%% *}" "$rss"
		done
		printf '\n\n'
	} >>"$md"
	kill "$fleet_pid"
	wait "$fleet_pid" || true
	fleet_pid=
done
cat "$md"
