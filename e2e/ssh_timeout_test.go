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

	code, out, errs := bgjob(ctx, append(g, "run", "--json", "--timeout", "1s", "--grace", "500ms", "--", "sleep 60")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	var j jobdir.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.PGID <= 1 {
		t.Fatalf("run output %q: %v", out, err)
	}

	// A wait holds a session open on the host; drop every connection and
	// restart sshd while the timer runs.
	waitThroughDrop(t, srv, g, j.ID)

	// Nobody is connected when the timeout strikes. Poll until the job has
	// ended (the timeout is 1s; allow a loaded machine 15s).
	var jobs []jobdir.Job
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, out, errs := bgjob(ctx, append(g, "status", "--json", j.ID)...)
		if code != 0 {
			t.Fatalf("status: %d %s", code, errs)
		}
		jobs = nil
		if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
			t.Fatalf("status output %q: %v", out, err)
		}
		if jobs[0].Status != jobdir.StatusRunning || time.Now().After(deadline) {
			break
		}
	}
	got := jobs[0]
	if got.Status != jobdir.StatusKilled || got.Reason != "timeout" || got.ExitCode == nil || *got.ExitCode != 143 || got.Signal != "TERM" {
		b, _ := json.Marshal(got)
		t.Fatalf("job is %s, want killed by the timeout's TERM with 143: %s", got.Status, b)
	}
	// The wrapper exits just after it records the status: allow it that.
	n := groupMembers(j.PGID)
	for deadline := time.Now().Add(2 * time.Second); n > 0 && time.Now().Before(deadline); n = groupMembers(j.PGID) {
		time.Sleep(20 * time.Millisecond)
	}
	if n > 0 {
		t.Fatalf("%d processes of the job's group %d remain", n, j.PGID)
	}
	// Nor any process, in any group, that runs the job's scripts.
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), j.Dir) {
			t.Errorf("%s still runs: %q", filepath.Dir(p), b)
		}
	}
}
