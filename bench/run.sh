#!/usr/bin/env bash
# bench/run.sh: bgjob against the tools users would otherwise pick, side by
# side, interleaved (A B A B ...), reporting medians and ratios. Run it with
# `task bench` or `bash bench/run.sh` from the repository, as root on a fresh
# Debian machine (it installs what it needs with apt-get) or as a user who
# has hyperfine, nq, task-spooler, openssh-server and GNU time installed.
# docs/benchmarks.md explains every measurement and holds the latest table.
#
# Environment (all optional):
#   BENCH_OUT      directory for the results (default bench/out)
#   BENCH_ROUNDS   interleaved rounds of the fast groups (default 40)
#   BENCH_SSH_ROUNDS  rounds of the cold SSH group (default 15)
#   BENCH_GO_TIME  -benchtime of the Go benchmarks (default 30x; "skip" skips them)
#   BENCH_RUNS_ROUNDS  rounds of the 100-runs group (default 8)
#   BENCH_SSH      "skip" skips the SSH groups
#
# The results go to $BENCH_OUT/results.md (and to stdout at the end),
# $BENCH_OUT/go-bench.txt and $BENCH_OUT/hyperfine-start.md.
set -euo pipefail
trap 'printf "bench: error: line %s failed (exit %s)\n" "$LINENO" "$?" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/usr/local/go/bin:$PATH

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

rounds=${BENCH_ROUNDS:-40}
ssh_rounds=${BENCH_SSH_ROUNDS:-15}
runs_rounds=${BENCH_RUNS_ROUNDS:-8}
ssh_bench=${BENCH_SSH:-}
go_time=${BENCH_GO_TIME:-30x}
out=${BENCH_OUT:-$repo/bench/out}
started=$(date +%s)

# --- what the harness needs -------------------------------------------------
need=()
command -v hyperfine >/dev/null 2>&1 || need+=(hyperfine)
command -v nq >/dev/null 2>&1 || need+=(nq)
command -v tsp >/dev/null 2>&1 || need+=(task-spooler)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/bin/time ] || need+=(time)
command -v setsid >/dev/null 2>&1 || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages: ${need[*]} (install them, or run as root)"
	say "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

tmp=$(mktemp -d /tmp/bgjob-bench.XXXXXX)
sshd_pid=
cleanup() {
	set +e
	if [ -n "${cfg:-}" ] && [ -S "$tmp/cm.sock" ]; then
		ssh -F "$cfg" -S "$tmp/cm.sock" -O exit bench-cm >/dev/null 2>&1
	fi
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
	[ -S "$tmp/ts.sock" ] && TS_SOCKET=$tmp/ts.sock tsp -K >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# What is built is the working tree: say so when it is not HEAD (untracked
# files count: a new .go file changes the binary).
rev=$(git -C "$repo" rev-parse --short HEAD)
dirty=
[ -z "$(git -C "$repo" status --porcelain -- . ':!bench' ':!docs/benchmarks.md' 2>/dev/null)" ] || dirty=' (with uncommitted changes)'
say "building bgjob and the harness tools into $tmp"
go build -o "$tmp/bgjob" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/fabricate" ./bench/cmd/fabricate
go build -o "$tmp/sshd" ./bench/cmd/sshd
go build -o "$tmp/hello" ./bench/cmd/hello

mkdir -p "$out" "$tmp/root" "$tmp/nq" "$tmp/t" "$tmp/ssh" "$tmp/bin"
chmod 700 "$tmp/root"
md=$out/results.md
targets=$out/targets.tsv
: >"$md"
: >"$targets"
# The commands below are shown as they run here: bgjob is on PATH, the job
# root and the ssh_config come from the environment.
ln -s "$tmp/bgjob" "$tmp/bin/bgjob"
ln -s "$tmp/hello" "$tmp/bin/hello"
ln -s "$tmp/fabricate" "$tmp/bin/fabricate"
export PATH=$tmp/bin:$PATH
export BGJOB_ROOT=$tmp/root NQDIR=$tmp/nq TS_SOCKET=$tmp/ts.sock TMPDIR=$tmp/t
export SSH_AUTH_SOCK=
unset BGJOB_HOST BGJOB_WORKSPACE BGJOB_SSH_CONFIG
cd "$tmp"

il() { "$tmp/interleave" -md "$md" -targets "$targets" "$@" >&2; }

{
	echo "# bgjob benchmarks"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev$dirty, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start,"
	echo "$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), /bin/sh is $(readlink -f /bin/sh),"
	echo "job root on $(findmnt -n -o FSTYPE -T "$tmp" 2>/dev/null || echo '?'). Medians of wall-clock time; ratios are of medians."
} >>"$md"

# --- 1. start latency -------------------------------------------------------
say "start latency"
il -title "Start latency: launching one detached job locally" -n "$rounds" -w 5 -base setsid \
	-c "bgjob=bgjob -w start run -q -- true" \
	-c "setsid=sh -c 'setsid nohup true >/dev/null 2>&1 </dev/null &'" \
	-c "nq=nq true" \
	-c "tsp=tsp true" \
	-c "go-floor=bgjob --help" \
	-target "bgjob / setsid <= 1.1" -target "bgjob / nq < 1" -target "bgjob / tsp < 1" \
	-note "go-floor is bgjob starting and printing its help: the cost of starting the Go binary, before any work."
# hyperfine runs all runs of one command before the next; kept as a
# cross-check of the interleaved numbers, not used for the targets.
hyperfine -N -w 5 -r "$rounds" --export-markdown "$out/hyperfine-start.md" \
	"bgjob -w start run -q -- true" "sh -c 'setsid nohup true >/dev/null 2>&1 </dev/null &'" \
	"nq true" "tsp true" >/dev/null 2>&1 || say "hyperfine cross-check failed (ignored)"
tsp -K >/dev/null 2>&1 || true

# --- 2. inspect -------------------------------------------------------------
say "fabricating 10, 1,000 and 10,000 jobs (docs/format.md; see docs/benchmarks.md)"
declare -A newest
for n in 10 1000 10000; do
	newest[$n]=$("$tmp/fabricate" -root "$tmp/root" -w "n$n" -n "$n")
done
say "against the Go floor"
il -title "Against the Go floor: each verb beside a hello-world Go binary" -n "$rounds" -w 5 -base floor \
	-c "floor=hello" \
	-c "run=bgjob -w start run -q -- true" \
	-c "status=bgjob -w n10 status ${newest[10]}" \
	-c "ls=bgjob -w n10 ls --limit 20" \
	-c "ls-10000=bgjob -w n10000 ls --limit 20" \
	-c "logs=bgjob -w n10 logs --tail 100 ${newest[10]}" \
	-c "sh=sh -c :" \
	-target "run / floor <= 2" -target "status / floor <= 1.5" -target "ls / floor <= 1.5" \
	-target "logs / floor <= 1.5" -target "ls-10000 / ls <= 1.2" \
	-note "floor is bench/cmd/hello, a Go hello-world binary; ls is at 10 jobs, ls-10000 at 10,000 (fabricated, ended); logs reads a 200-line log of an ended job; sh is \\`sh -c :\\`, the cost of one shell."
say "100 runs beside 1,500 ended jobs"
il -title "100 sequential runs: in an empty workspace and beside 1,500 ended jobs" -n "$runs_rounds" -w 1 -base empty \
	-setup "empty=fabricate -root $tmp/root -w many0 -fresh -n 0" \
	-c "empty=sh -c 'i=0; while [ \$i -lt 100 ]; do bgjob -w many0 run -q -- true || exit; i=\$((i + 1)); done'" \
	-setup "1500=fabricate -root $tmp/root -w many1500 -fresh -n 1500" \
	-c "1500=sh -c 'i=0; while [ \$i -lt 100 ]; do bgjob -w many1500 run -q -- true || exit; i=\$((i + 1)); done'" \
	-target "1500 / empty <= 1.2" \
	-note "Before each timed loop, untimed, \\`fabricate -fresh\\` empties the workspace (empty) or fills it with exactly 1,500 fabricated ended jobs (1500). Run's pruning pass starts in one run of 8 (DefaultPruneEvery); beside 1,500 ended jobs it has work (more than DefaultKeep, 1,000, ended)."
rm -rf "$tmp/root/many0" "$tmp/root/many1500"
say "inspect"
il -title "status ID: one job by id" -n "$rounds" -base 10 \
	-c "10=bgjob -w n10 status ${newest[10]}" \
	-c "1000=bgjob -w n1000 status ${newest[1000]}" \
	-c "10000=bgjob -w n10000 status ${newest[10000]}" \
	-target "10000 / 10 <= 2"
il -title "status NAME: the newest job by name" -n "$rounds" -base 10 \
	-c "10=bgjob -w n10 status job-9" \
	-c "1000=bgjob -w n1000 status job-999" \
	-c "10000=bgjob -w n10000 status job-9999" \
	-target "10000 / 10 <= 2"
il -title "ls --limit 20" -n "$rounds" -base 10 \
	-c "10=bgjob -w n10 ls --limit 20" \
	-c "1000=bgjob -w n1000 ls --limit 20" \
	-c "10000=bgjob -w n10000 ls --limit 20" \
	-c "glob-10=sh -c 'set -- \"\$1\"/[0-9]*' sh $tmp/root/n10" \
	-c "glob-10000=sh -c 'set -- \"\$1\"/[0-9]*' sh $tmp/root/n10000" \
	-target "10000 / 10 <= 2" \
	-note "glob-N is the first step of the list script alone: sh expanding the workspace's job directories (readdir and sort)."
il -title "logs --tail 100 ID (200-line logs)" -n "$rounds" -base 10 \
	-c "10=bgjob -w n10 logs --tail 100 ${newest[10]}" \
	-c "1000=bgjob -w n1000 logs --tail 100 ${newest[1000]}" \
	-c "10000=bgjob -w n10000 logs --tail 100 ${newest[10000]}"
il -title "status NAME of the oldest job (worst case: every meta.json is read)" -n 3 -w 1 -base 10 \
	-c "10=bgjob -w n10 status job-0" \
	-c "1000=bgjob -w n1000 status job-0" \
	-c "10000=bgjob -w n10000 status job-0"

say "writing a 1 MiB and a 1 GiB log"
big=$("$tmp/fabricate" -root "$tmp/root" -w big -n 2 -lines 1)
small=$(ls "$tmp/root/big" | sed -n 1p)
line='2026-11-30T01:02:03Z INFO worker 7: processed item 1234567 in 12.5 ms, queue depth 42'
{ yes "$line" || :; } | head -c $((1 << 20)) >"$tmp/root/big/$small/stdout.log"
{ yes "$line" || :; } | head -c $((1 << 30)) >"$tmp/root/big/$big/stdout.log"
il -title "logs --tail 100 on a 1 GiB log vs a 1 MiB log" -n "$rounds" -base 1MiB \
	-c "1MiB=bgjob -w big logs --tail 100 $small" \
	-c "1GiB=bgjob -w big logs --tail 100 $big" \
	-c "tail=tail -n 100 $tmp/root/big/$big/stdout.log" \
	-target "1GiB / 1MiB <= 2"
rm -f "$tmp/root/big/$big/stdout.log"

# --- 3. over SSH ------------------------------------------------------------
if [ "$ssh_bench" != skip ]; then
	say "starting a loopback sshd"
	"$tmp/sshd" -dir "$tmp/ssh" -control "$tmp/cm.sock" -timeout 20m >"$tmp/ssh/path" 2>"$tmp/ssh/err" &
	sshd_pid=$!
	for _ in $(seq 100); do
		[ -s "$tmp/ssh/path" ] && break
		kill -0 "$sshd_pid" 2>/dev/null || die "sshd helper failed: $(cat "$tmp/ssh/err")"
		sleep 0.1
	done
	cfg=$(cat "$tmp/ssh/path")
	[ -n "$cfg" ] || die "sshd helper did not start: $(cat "$tmp/ssh/err")"
	export BGJOB_SSH_CONFIG=$cfg
	ssh -F "$cfg" bench true || die "ssh to the loopback sshd failed"

	say "cold SSH"
	il -title "Cold SSH: a new connection per command" -n "$ssh_rounds" -w 2 -base ssh \
		-c "ssh=ssh -F $cfg bench true" \
		-c "run=bgjob -H bench -w sshrun run -q -- true" \
		-c "status=bgjob -H bench -w n10 status ${newest[10]}" \
		-c "logs=bgjob -H bench -w n10 logs --tail 100 ${newest[10]}" \
		-c "ls=bgjob -H bench -w n10 ls --limit 20" \
		-target "run / ssh <= 0.6" -target "status / ssh <= 0.6" -target "logs / ssh <= 0.6" \
		-note "bgjob resolves the host with \`ssh -G\`, then connects with golang.org/x/crypto/ssh and runs one script on one session."

	say "ControlMaster"
	ssh -F "$cfg" -M -S "$tmp/cm.sock" -fN bench-cm
	il -title "Over a live OpenSSH ControlMaster socket" -n "$rounds" -w 3 -base ssh-S \
		-c "ssh-S=ssh -F $cfg -S $tmp/cm.sock -o ProxyCommand=false bench-cm true" \
		-c "status=bgjob -H bench-cm -w n10 status ${newest[10]}" \
		-c "run=bgjob -H bench-cm -w sshrun run -q -- true" \
		-c "logs=bgjob -H bench-cm -w n10 logs --tail 100 ${newest[10]}" \
		-c "ssh-G=ssh -G -F $cfg bench-cm" \
		-c "status-no-ssh-G=PATH=/nonexistent bgjob -H bench-cm -w n10 status ${newest[10]}" \
		-target "status / ssh-S <= 1.2" -target "run / ssh-S <= 1.2" -target "logs / ssh-S <= 1.2" \
		-note "ssh-G is the config resolution bgjob runs on a cache miss (ControlPath is in the config; answers are cached, see docs/benchmarks.md). status-no-ssh-G is the same status with no ssh on PATH, so that runtime/ssh reads the config with its built-in parser instead: what skipping \`ssh -G\` would save."

	# "ssh -S" and bgjob make a connection of their own, silently, when the
	# master is gone (see bench/ssh-cm.sh): then the times above are not
	# over it.
	ssh -F "$cfg" -S "$tmp/cm.sock" -O check bench-cm 2>/dev/null || die "the ControlMaster died during its group"

	say "warm SSH (library, one connection; go test -bench SSHWarm)"
	{
		echo
		echo "### Warm SSH: the library over one reused connection"
		echo
		echo "\`go test -run '^\$' -bench SSHWarm -benchtime 30x .\` (bench_test.go): a reused runtime/ssh Runtime and Client."
		echo
		echo "| operation | time/op |"
		echo "|---|--:|"
	} >>"$md"
	(cd "$repo" && go test -run '^$' -bench 'SSHWarm' -benchtime 30x . 2>&1) | tee "$out/go-bench-ssh.txt" |
		awk '/^BenchmarkSSHWarm\// { name=$1; sub(/^BenchmarkSSHWarm\//, "", name); sub(/-[0-9]+$/, "", name); printf "| %s | %.2f ms |\n", name, $3/1e6 }' >>"$md"
fi

# --- 4. peak RSS ------------------------------------------------------------
say "peak RSS at 10,000 jobs"
w=n10000
id=${newest[10000]}
{
	echo
	echo "### Peak RSS of every verb at 10,000 jobs"
	echo
	echo "\`/usr/bin/time -f %M\`, the largest of 3 runs (the verb's process; its sh script is counted when larger)."
	echo
	echo "| verb | command | peak RSS | target | met? |"
	echo "|---|---|--:|---|---|"
} >>"$md"
rss() { # LABEL ARGS...: the largest peak RSS in KiB over 3 runs; @OLDEST@ is
	# replaced by the next of the jobs in $rss_rm
	local label=$1 max=0 kb i=0 a args
	shift
	for _ in 1 2 3; do
		i=$((i + 1))
		args=()
		for a in "$@"; do
			[ "$a" = @OLDEST@ ] && a=$(echo "$rss_rm" | sed -n "${i}p")
			args+=("$a")
		done
		/usr/bin/time -f %M -o "$tmp/rss" "${args[@]}" >/dev/null 2>"$tmp/rss.err" || { cat "$tmp/rss.err" >&2; die "$label failed"; }
		kb=$(tail -n 1 "$tmp/rss")
		[ "$kb" -gt "$max" ] && max=$kb
	done
	local met=yes
	[ $((max * 1024)) -lt 30000000 ] || met="**no**"
	printf '| %s | `%s` | %.1f MB | < 30 MB | %s |\n' "$label" "${*//@OLDEST@/ID}" "$(echo "$max" | awk '{print $1*1024/1e6}')" "$met" >>"$md"
	printf '%s\t%s\t%.1f MB\t%s\n' "Peak RSS" "$label < 30 MB" "$(echo "$max" | awk '{print $1*1024/1e6}')" "$met" >>"$targets"
}
rss run bgjob -w "$w" run -q -- true
rss status bgjob -w "$w" status "$id"
rss "status NAME" bgjob -w "$w" status job-9999
rss ls bgjob -w "$w" ls
rss "ls --limit 0" bgjob -w "$w" ls --limit 0
rss "ls --json --limit 0" bgjob -w "$w" ls --json --limit 0
rss logs bgjob -w "$w" logs --tail 100 "$id"
rss wait bgjob -w "$w" wait "$id"
rss stop bgjob -w "$w" stop "$id"
rss_rm=$(ls "$tmp/root/$w" | sed -n 1,3p)
rss rm bgjob -w "$w" rm @OLDEST@
rss "prune --dry-run" bgjob -w "$w" prune --dry-run --keep 100
[ "$ssh_bench" = skip ] || rss "over SSH: ls --limit 0" bgjob -H bench -w "$w" ls --limit 0

# --- 5. script sizes ----------------------------------------------------------
say "script sizes (go test -bench Scripts ./shellgen)"
{
	echo
	echo "### Script size per verb"
	echo
	echo "Bytes of each generated script (\\`wc -c\\`), from \\`go test -run '^\$' -bench Scripts -benchtime 1x ./shellgen\\` (shellgen/scripts_bench_test.go): what runs with \\`sh -c\\`, and over SSH what is sent on every call. job.sh is the wrapper, written into the job directory by the launch."
	echo
	echo "| script | bytes |"
	echo "|---|--:|"
} >>"$md"
(cd "$repo" && go test -run '^$' -bench 'Scripts' -benchtime 1x ./shellgen 2>&1) | tee "$out/go-bench-scripts.txt" |
	awk '/^BenchmarkScripts\// { name=$1; sub(/^BenchmarkScripts\//, "", name); sub(/-[0-9]+$/, "", name); for (i=2; i<NF; i++) if ($(i+1)=="script-bytes") printf "| %s | %d |\n", name, $i }' >>"$md"

# --- summary of the targets ---------------------------------------------------
{
	echo
	echo "### Targets"
	echo
	echo "| measurement | target | measured | met? |"
	echo "|---|---|--:|---|"
	awk -F'\t' '{ m=$3; if (m ~ /^[0-9.]+$/) m=m "×"; printf "| %s | %s | %s | %s |\n", $1, $2, m, $4 }' "$targets"
} >>"$md"

# --- Go benchmarks ------------------------------------------------------------
if [ "$go_time" != skip ]; then
	say "Go benchmarks (go test -run '^\$' -bench . -benchtime $go_time ./...)"
	(cd "$repo" && go test -run '^$' -bench . -benchmem -benchtime "$go_time" ./... 2>&1) >"$out/go-bench.txt" ||
		{ cat "$out/go-bench.txt" >&2; die "Go benchmarks failed"; }
	{
		echo
		echo "### Go benchmarks"
		echo
		echo "\`go test -run '^\$' -bench . -benchmem -benchtime $go_time ./...\` (full output: go-bench.txt)."
		echo
		echo "| package | benchmark | time/op | B/op | allocs/op |"
		echo "|---|---|--:|--:|--:|"
		awk '/^pkg: / { pkg=$2; sub(/^github.com\/bgjob\/bgjob\/?/, "", pkg); if (pkg=="") pkg="bgjob" }
			/^Benchmark/ && / ns\/op/ {
				name=$1; sub(/-[0-9]+$/, "", name); t=""; b=""; a=""
				for (i=2; i<NF; i++) {
					if ($(i+1)=="ns/op") { v=$i; t=(v>=1e6) ? sprintf("%.2f ms", v/1e6) : (v>=1e3) ? sprintf("%.1f µs", v/1e3) : sprintf("%.0f ns", v) }
					if ($(i+1)=="B/op") b=$i
					if ($(i+1)=="allocs/op") a=$i
				}
				printf "| %s | %s | %s | %s | %s |\n", pkg, name, t, b, a
			}' "$out/go-bench.txt"
	} >>"$md"
fi

echo >>"$md"
echo "Total harness time: $(($(date +%s) - started)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end." >>"$md"
say "done in $(($(date +%s) - started)) s; results in $md"
cat "$md"
