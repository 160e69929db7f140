package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/sshtest"
)

// TestSameHostTwice: two ssh_config aliases of one user@host:port share a
// root. A fan-out over both runs once, on the first, and says on stderr
// that the second alias is the first one; before, run failed on the second
// alias with "job directory exists" after a warning that the job's own
// name was still running. (Two distinct hosts on one machine would share
// the root too: that aliases that differ are kept apart is tested in
// runtime/ssh, TestResolveEndpoint.)
func TestSameHostTwice(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	if err := srv.WriteKnownHosts(kh, false); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte(srv.ConfigEntry("a", kh)+srv.ConfigEntry("b", kh)), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	g := []string{"--root", root, "--ssh-config", cfgFile, "-H", "a,b"}
	ctx := context.Background()

	code, out, errs := bgjob(ctx, append(g, "run", "--json", "-n", "twice", "--", "echo hi")...)
	warning := fmt.Sprintf("bgjob: warning: b is the same host as a (%s@127.0.0.1:%d): using it once\n", srv.User, srv.Port)
	if code != 0 || errs != warning {
		t.Fatalf("run on a,b: exit %d, stderr %q; want 0 and only %q", code, errs, warning)
	}
	var ran []fleetHost
	if err := json.Unmarshal([]byte(out), &ran); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	if len(ran) != 1 || ran[0].Host != "a" || ran[0].Job == nil {
		t.Fatalf("run --json: want one job, on a, got %s", out)
	}

	// The other verbs go to the host once too, in the form of a fan-out
	// (a HOST column, an object per host): wait sees the job once.
	code, out, errs = bgjob(ctx, append(g, "wait", "--json", "twice")...)
	if code != 0 || errs != warning {
		t.Fatalf("wait: exit %d, stderr %q", code, errs)
	}
	var waited []fleetHost
	if err := json.Unmarshal([]byte(out), &waited); err != nil || len(waited) != 1 || len(waited[0].Jobs) != 1 {
		t.Fatalf("wait --json: %v: want the job once, on a, got %s", err, out)
	}
	code, out, _ = bgjob(ctx, append(g, "ls")...)
	if code != 0 || !strings.HasPrefix(out, "HOST") || strings.Count(out, "twice") != 1 {
		t.Fatalf("ls on a,b: exit %d, want a table with a HOST column and the job once:\n%s", code, out)
	}
}
