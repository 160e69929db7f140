package cli

import (
	"strings"
	"testing"
)

// A release build stamps version and commit with -ldflags -X: --version
// shows them even when the build information has no commit
// (-buildvcs=false, as a test binary is built).
func TestVersionFromLdflags(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "4f2a9c1e0b7d5a6b"
	if got := versionText(); !strings.HasPrefix(got, "bgjob v1.2.3 (commit 4f2a9c1e0b7d, ") {
		t.Errorf("versionText() = %q, want the stamped version and commit", got)
	}
}
