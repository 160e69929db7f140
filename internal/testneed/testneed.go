// Package testneed ends a test whose machine lacks what the test needs: a
// program, a daemon, root, /proc. On a developer's machine that is a skip
// naming what is missing; in CI (CI set) it is a failure, because .ci/run
// installs everything and runs as root, so no test is skipped there.
package testneed

import (
	"os"
	"testing"
)

// Missing ends t: a failure when CI is set, else a skip. format names
// what is missing (and, where it helps, how to get it).
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI lacks what this test needs: "+format, args...)
		return
	}
	t.Skipf("missing: "+format, args...)
}
