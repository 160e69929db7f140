#!/usr/bin/env bash
# The start of every verb (issue 20): bgjob --version, and status and
# logs --tail 10 of an ended job, beside a Go hello world (the floor), an
# older binary's, and binaries that only import what bgjob links (what
# their package inits and pages cost before main), interleaved
# (bench/cmd/interleave), and the status made by the library alone
# (bench/cmd/libstatus: none of the CLI, MCP, the terminal views or the
# containers linked; then with runtime/ssh). bgjob is built twice: `go
# build` (with cgo where a C compiler is, as go install builds it) and
# CGO_ENABLED=0 (as Taskfile's release builds it).
#   bash bench/start.sh [OLD_COMMIT] [ROUNDS]
# (defaults: HEAD~3, 200)
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-HEAD~3} n=${2:-200}
tmp=$(mktemp -d)
# The import-only binaries import internal packages: they are built
# inside the module.
imp=$(mktemp -d ./.start.XXXXXX)
cleanup() { rm -rf "$tmp" "$imp"; }
trap cleanup EXIT
go build -o "$tmp/new" ./cmd/bgjob
go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
CGO_ENABLED=0 go build -o "$tmp/new-static" ./cmd/bgjob
CGO_ENABLED=0 go build -o "$tmp/bgjob-full" ./cmd/bgjob-full
git worktree add -q --detach "$tmp/src" "$old"
(cd "$tmp/src" && go build -o "$tmp/old" ./cmd/bgjob && CGO_ENABLED=0 go build -o "$tmp/old-static" ./cmd/bgjob)
git worktree remove --force "$tmp/src"
go build -o "$tmp/interleave" ./bench/cmd/interleave
go build -o "$tmp/hello" ./bench/cmd/hello
# The same status made by the library alone: what a look would cost if
# bgjob were not one binary (with and without runtime/ssh linked).
CGO_ENABLED=0 go build -o "$tmp/lib" ./bench/cmd/libstatus
CGO_ENABLED=0 go build -tags ssh -o "$tmp/lib-ssh" ./bench/cmd/libstatus
imports=(
	gdenc=github.com/gdamore/encoding
	tcell=github.com/gdamore/tcell/v2
	gob=encoding/gob
	jsonschema=github.com/google/jsonschema-go/jsonschema
	sshconfig=github.com/kevinburke/ssh_config
	xssh=golang.org/x/crypto/ssh
	nethttp=net/http
	mcpsdk=github.com/modelcontextprotocol/go-sdk/mcp
	cli=github.com/bgjob/bgjob/internal/cli
)
only=()
for i in "${imports[@]}"; do
	mkdir "$imp/${i%%=*}"
	printf 'package main\n\nimport (\n\t"fmt"\n\n\t_ "%s"\n)\n\nfunc main() { fmt.Println("hello, world") }\n' "${i#*=}" >"$imp/${i%%=*}/main.go"
	CGO_ENABLED=0 go build -o "$tmp/only-${i%%=*}" "./$imp/${i%%=*}"
	only+=(-c "only-${i%%=*}=$tmp/only-${i%%=*}")
done
# All of bgjob linked (what main reaches), its inits run, and no verb.
mkdir "$imp/linked"
printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n\n\t"github.com/bgjob/bgjob/internal/cli"\n)\n\nfunc main() {\n\tif len(os.Args) > 1 {\n\t\tos.Exit(cli.Main())\n\t}\n\tfmt.Println("hello, world")\n}\n' >"$imp/linked/main.go"
CGO_ENABLED=0 go build -o "$tmp/linked" "./$imp/linked"
stat -c "%s %n" "$tmp/hello" "$tmp/linked" "$tmp/new" "$tmp/new-static"

root=$tmp/root
id=$("$tmp/new" --root "$root" run -q -- 'seq 1 1000; echo err >&2')
sleep 0.5
# The first status records the job's leftovers.
"$tmp/new" --root "$root" status "$id" >/dev/null

echo "## before main: load $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/interleave" -title "before main" -n "$n" -w 20 -base floor \
	-c "floor=$tmp/hello" "${only[@]}" -c "linked=$tmp/linked" \
	-c "version-static=$tmp/new-static --version"
echo "## the verbs: load $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/interleave" -title "the verbs" -n "$n" -w 20 -base floor \
	-c "floor=$tmp/hello" \
	-c "version-old=$tmp/old --version" -c "version-new=$tmp/new --version" \
	-c "status-old=$tmp/old --root $root status $id" -c "status-new=$tmp/new --root $root status $id" \
	-c "tail-old=$tmp/old --root $root logs --tail 10 $id" -c "tail-new=$tmp/new --root $root logs --tail 10 $id"
echo "## the verbs, CGO_ENABLED=0: load $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/interleave" -title "the verbs, CGO_ENABLED=0" -n "$n" -w 20 -base floor \
	-c "floor=$tmp/hello" \
	-c "version-old=$tmp/old-static --version" -c "version-new=$tmp/new-static --version" \
	-c "status-old=$tmp/old-static --root $root status $id" -c "status-new=$tmp/new-static --root $root status $id" \
	-c "tail-old=$tmp/old-static --root $root logs --tail 10 $id" -c "tail-new=$tmp/new-static --root $root logs --tail 10 $id" \
	-c "status-lib=$tmp/lib $root $id" -c "status-lib-ssh=$tmp/lib-ssh $root $id"
echo "## page faults (perf stat -r 100), load $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v perf >/dev/null; then
	for c in "$tmp/hello" "$tmp/old-static --version" "$tmp/new-static --version" \
		"$tmp/old-static --root $root status $id" "$tmp/new-static --root $root status $id" \
		"$tmp/old-static --root $root logs --tail 10 $id" "$tmp/new-static --root $root logs --tail 10 $id"; do
		# shellcheck disable=SC2086 # $c is a command and its words
		perf stat -r 100 -x, -o "$tmp/perf" -e page-faults $c >/dev/null 2>&1
		printf '%s\t%s\n' "$(grep page-faults "$tmp/perf" | cut -d, -f1)" "${c#"$tmp"/}"
	done
fi
