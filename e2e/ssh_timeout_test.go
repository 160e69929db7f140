package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// TestSSHTimeoutAcrossDrop: --timeout is enforced on the host, so a job
// started over SSH is stopped on time although every connection to the
// host was killed and sshd restarted meanwhile: it ends killed (reason
// timeout, 143) and no process of its group, timer included, remains.
func TestSSHTimeoutAcrossDrop(t *testing.T) {
	t.Parallel()
	srv, _, g := sshJobs(t)
	ctx := context.Background()

	code, out, errs := bgjob(ctx, append(g, "run", "--json", "--timeout", "8s", "--grace", "500ms", "--", "sleep 60")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	var j jobdir.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.PGID <= 1 {
		t.Fatalf("run output %q: %v", out, err)
	}

	// A wait holds a session open on the host; drop every connection and
	// restart sshd while the timer runs. waitThroughDrop fails the test
	// unless the wait ended with a connection error: had the timeout struck
	// first, the wait would have returned the job's 143.
	waitThroughDrop(t, srv, g, j.ID)

	// Nobody is connected when the timeout strikes. Wait until the job has
	// ended (the timeout is 8s, long enough for the drop and the restart
	// to come first on a loaded machine, where 2s did not; allow 30s).
	var got jobdir.Job
	ended := eventually(30*time.Second, func() bool {
		code, out, errs := bgjob(ctx, append(g, "status", "--json", j.ID)...)
		var jobs []jobdir.Job
		if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
			t.Fatalf("status: exit %d, output %q, stderr %s", code, out, errs)
		}
		got = jobs[0]
		return got.Status != jobdir.StatusRunning
	})
	if !ended {
		t.Fatalf("job still %s 30s after its 8s timeout", got.Status)
	}
	if got.Status != jobdir.StatusKilled || got.Reason != "timeout" || got.ExitCode == nil || *got.ExitCode != 143 || got.Signal != "TERM" {
		b, _ := json.Marshal(got)
		t.Fatalf("job is %s, want killed by the timeout's TERM with 143: %s", got.Status, b)
	}
	// The wrapper exits just after it records the status: allow it that.
	if !eventually(2*time.Second, func() bool { return groupMembers(j.PGID) == 0 }) {
		t.Fatalf("%d processes of the job's group %d remain", groupMembers(j.PGID), j.PGID)
	}
	// Nor any process, in any group, that runs the job's scripts.
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), j.Dir) {
			t.Errorf("%s still runs: %q", filepath.Dir(p), b)
		}
	}
}
