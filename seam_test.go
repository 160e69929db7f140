package bgjob_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRuntimesNeedNothingInternal: the seam is open. A runtime, and
// shellgen, which a runtime uses, build from public packages only, so a
// runtime written outside this module can do all that theirs do
// (Example_runtime is one).
func TestRuntimesNeedNothingInternal(t *testing.T) {
	pkgs := []string{"./runtime/...", "./shellgen"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %v gave only %q", pkgs, deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/bgjob/bgjob/") && strings.Contains(d, "/internal") {
			t.Errorf("%v depend on %s", pkgs, d)
		}
	}
}

// TestEngineHoldsNoHostSide: the root package is the library's engine and
// API only. What this machine answers in Go lives in runtime/local behind
// bgjob.Answerer; the engine starts no process, reads no /proc, and has
// no build tags (one engine for every platform).
func TestEngineHoldsNoHostSide(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}|{{join .GoFiles \" \"}}|{{join .IgnoredGoFiles \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports, files, ignored := splitList(t, string(out))
	for _, imp := range imports {
		switch imp {
		case "os/exec", "syscall", "golang.org/x/sys/unix":
			t.Errorf("the engine imports %s", imp)
		}
	}
	if len(ignored) > 0 {
		t.Errorf("the engine has files for other platforms (build tags): %q", ignored)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"/proc`) {
			t.Errorf("%s reads /proc", f)
		}
		if strings.Contains(string(b), "//go:build") {
			t.Errorf("%s has a build tag", f)
		}
	}
}

// splitList splits go list's "imports|files|ignored" line.
func splitList(t *testing.T, line string) (imports, files, ignored []string) {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) != 3 {
		t.Fatalf("go list printed %q", line)
	}
	return strings.Fields(parts[0]), strings.Fields(parts[1]), strings.Fields(parts[2])
}

// TestLightBinaryLinksNoHeavyMode: the bgjob binary, which serves the
// local verbs and --via hosts, links none of the packages whose inits
// and size cost every call its start (docs/benchmarks.md): the SSH and
// container transports, the MCP server, the terminal UI, net/http.
// bgjob-full, beside it, holds those (internal/cli.Full).
func TestLightBinaryLinksNoHeavyMode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/bgjob").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave only %q", deps)
	}
	heavy := []string{"golang.org/x/crypto/ssh", "github.com/modelcontextprotocol/go-sdk", "github.com/gdamore/tcell",
		"github.com/moby/", "net/http", "github.com/bgjob/bgjob/runtime/ssh", "github.com/bgjob/bgjob/runtime/container",
		"github.com/bgjob/bgjob/internal/mcp", "github.com/bgjob/bgjob/internal/tui", "github.com/bgjob/bgjob/host"}
	for _, d := range deps {
		for _, h := range heavy {
			if d == h || strings.HasPrefix(d, strings.TrimSuffix(h, "/")+"/") && d != "github.com/bgjob/bgjob/host/near" {
				t.Errorf("cmd/bgjob links %s", d)
			}
		}
	}
}
