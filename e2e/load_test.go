package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// idleProcesses starts n sleeping processes for the test and ends them
// when it ends.
func idleProcesses(t *testing.T, n int) {
	t.Helper()
	var cmds []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	for range n {
		c := exec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			t.Fatalf("starting idle process: %v", err)
		}
		cmds = append(cmds, c)
	}
}

// TestTimeUnderLoad: with 300 more processes on the host, stop --grace 1s
// of a job that ignores TERM, and run --timeout 1s --grace 1s of one, end
// the job in about the time asked for: the grace and the timeout are
// measured by a clock, not by rounds of looking at the host. The times
// are the host's, as the job directory records them (the stop file,
// written just before the TERM; the wrapper's start; ended_at), so that
// the calls around them, which a loaded machine slows (a stop call took
// 8 s at a load average of 44), do not decide the test; the upper bounds
// leave a margin for the host's own looks. docs/benchmarks.md has the
// numbers of the whole calls. Not parallel: the package's parallel tests
// wait until it is done.
func TestTimeUnderLoad(t *testing.T) {
	targets := localAndSSH(t)
	idleProcesses(t, 300)
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			bg := func(args ...string) string {
				t.Helper()
				code, out, errs := bgjob(ctx, append(tc.flags, args...)...)
				if code != 0 {
					t.Fatalf("bgjob %v: exit %d: %s", args, code, errs)
				}
				return strings.TrimSpace(out)
			}
			status := func(id string) jobdir.Job {
				t.Helper()
				var jobs []jobdir.Job
				if out := bg("status", "--json", id); json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
					t.Fatalf("status %s: %q", id, out)
				}
				return jobs[0]
			}
			const stubborn = `trap "" TERM; echo ready; sleep 300`

			id := bg("run", "-q", "--", stubborn)
			// TERM must find the trap set.
			bg("wait", "--for", "ready", "--timeout", "60s", id)
			bg("stop", "--grace", "1s", id)
			j := status(id)
			if j.Status != jobdir.StatusKilled || derefCode(j.ExitCode) != 137 || j.LiveProcesses != 0 || j.EndedAt == nil {
				t.Fatalf("after stop: %s exit %d, %d live, ended %v; want killed 137, none, an end", j.Status, derefCode(j.ExitCode), j.LiveProcesses, j.EndedAt)
			}
			fi, err := os.Stat(filepath.Join(j.Dir, "stop"))
			if err != nil {
				t.Fatal(err)
			}
			d := j.EndedAt.Sub(fi.ModTime())
			t.Logf("stop --grace 1s: the job ended %s after the stop", d)
			// ended_at has milliseconds; the stop's mtime finer ones.
			if d < time.Second-time.Millisecond || d > 5*time.Second {
				t.Errorf("stop --grace 1s: the job ended %s after the stop, want 1 s to 5 s", d)
			}

			id = bg("run", "-q", "--timeout", "1s", "--grace", "1s", "--", stubborn)
			code, _, errs := bgjob(ctx, append(tc.flags, "wait", "--timeout", "60s", id)...)
			if code != 137 {
				t.Errorf("wait: exit %d, want 137: %s", code, errs)
			}
			j = status(id)
			if j.Status != jobdir.StatusKilled || j.Reason != "timeout" || j.LiveProcesses != 0 || j.EndedAt == nil || j.HostStartedAt == nil {
				t.Fatalf("after the timeout: %s (%s), %d live, ended %v, started %v; want killed (timeout), none, both times", j.Status, j.Reason, j.LiveProcesses, j.EndedAt, j.HostStartedAt)
			}
			d = j.EndedAt.Sub(*j.HostStartedAt)
			t.Logf("run --timeout 1s --grace 1s: the job ended %s after its start", d)
			// The timeout and the grace, and a margin for the host's looks.
			if d < 2*time.Second-time.Millisecond || d > 6*time.Second {
				t.Errorf("run --timeout 1s --grace 1s: the job ended %s after its start, want 2 s to 6 s", d)
			}
		})
	}
}
