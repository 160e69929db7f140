package e2e

import (
	"context"
	"strings"
	"testing"
)

// TestNameLookupPastRecentJobs: a name is found among jobs older than the
// newest 20 (which the shell reads itself; older ones are searched with
// grep), and the newest job with the name wins.
func TestNameLookupPastRecentJobs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := bgjob(ctx, append([]string{"--root", root}, args...)...)
		if code != 0 {
			t.Fatalf("bgjob %v: exit %d: %s", args, code, errs)
		}
		return strings.TrimSpace(out)
	}
	first := run("run", "-q", "-n", "target", "--", "exit 0")
	second := run("run", "-q", "-n", "target", "--", "exit 0")
	run("run", "-q", "-n", "targetx", "--", "exit 0")
	for range 25 {
		run("run", "-q", "--", "exit 0")
	}
	if got := run("status", "--json", "target"); !strings.Contains(got, `"id": "`+second+`"`) {
		t.Fatalf("status target found %s, want the newest job named target, %s (the older is %s)", got, second, first)
	}
	if code, _, _ := bgjob(ctx, "--root", root, "status", "targe"); code != 1 {
		t.Fatalf("status of a name prefix: exit %d, want 1 (not found)", code)
	}
}
