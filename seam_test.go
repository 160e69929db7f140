package bgjob_test

import (
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
