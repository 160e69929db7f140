package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestNULInput: a NUL byte, which no argv or shell word can carry, in any
// input is a usage error (exit 2) that creates nothing. The CLI is called
// in-process, as a library user would pass such strings.
func TestNULInput(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	tests := []struct {
		name string
		args []string
	}{
		{"job name", []string{"run", "-n", "a\x00b", "--", "true"}},
		{"workspace", []string{"-w", "a\x00b", "run", "--", "true"}},
		{"workspace for ls", []string{"-w", "a\x00b", "ls"}},
		{"job ref", []string{"status", "a\x00b"}},
		{"rm ref", []string{"rm", "--force", "x\x00.."}},
		{"env name", []string{"run", "-e", "A\x00B=x", "--", "true"}},
		{"env value", []string{"run", "-e", "A=x\x00y", "--", "true"}},
		{"cwd", []string{"run", "-C", root + "\x00/x", "--", "true"}},
		{"script", []string{"run", "--", "echo a\x00b"}},
		{"argv word", []string{"run", "--", "echo", "a\x00b"}},
		{"shell", []string{"run", "--shell", "sh\x00", "--", "true"}},
		{"root", []string{"--root", root + "/x\x00y", "ls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := bgjob(context.Background(), append([]string{"--root", root}, tt.args...)...)
			if code != 2 || !strings.HasPrefix(errs, "bgjob: error: invalid request: ") || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q: want a usage error", code, out, errs)
			}
		})
	}
	if entries, _ := os.ReadDir(root); len(entries) > 1 {
		t.Errorf("bad input created %d entries in the root", len(entries))
	}
	if code, out, _ := bgjob(context.Background(), "--root", root, "ls", "-A", "--json"); code != 0 || strings.Contains(out, `"id"`) {
		t.Errorf("bad input created a job: %s", out)
	}
}
