package e2e

import (
	"context"
	"strings"
	"testing"
)

// TestNameLookupPastRecentJobs: the newest job with a name wins (found by
// the name index), and when the index is stale the name is still found
// among jobs older than the newest 20 (searched with grep).
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
	if got := run("status", "--json", "target"); !strings.Contains(got, `"id":"`+second+`"`) {
		t.Fatalf("status target found %s, want the newest job named target, %s (the older is %s)", got, second, first)
	}
	// With the newest removed, the name index is stale: the search finds
	// the older job among those past the newest 20.
	run("rm", second)
	if got := run("status", "--json", "target"); !strings.Contains(got, `"id":"`+first+`"`) {
		t.Fatalf("after rm, status target found %s, want %s", got, first)
	}
	if code, _, _ := bgjob(ctx, "--root", root, "status", "targe"); code != 1 {
		t.Fatalf("status of a name prefix: exit %d, want 1 (not found)", code)
	}
}
