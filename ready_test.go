package bgjob_test

import (
	"context"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// Ready's three outcomes on this machine: a line that matches (its time
// recorded in ready_at, which a later Status reports, and which a second
// readiness leaves as it is), a job that ends first (how it ended, no
// ready_at), and the timeout (the job runs on).
func TestReadyOutcomes(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, cmd       string
		ready, timedOut bool
		status          jobdir.Status
		line            string
		exitCode        int
	}{
		{name: "ready", cmd: `echo starting; sleep 0.2; echo "Listening on :8080"; sleep 60`, ready: true, status: jobdir.StatusRunning, line: "Listening on :8080\n"},
		{name: "ended first", cmd: `echo "port in use" >&2; exit 3`, status: jobdir.StatusExited, exitCode: 3},
		{name: "timed out", cmd: `echo starting; sleep 60`, timedOut: true, status: jobdir.StatusRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := c.Run(ctx, bgjob.Spec{Argv: []string{tc.cmd}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Remove(ctx, []string{j.ID}, bgjob.RemoveOptions{Force: true})
			before := time.Now()
			r, err := c.Ready(ctx, j.ID, "Listening on", bgjob.ReadyOptions{Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.Ready != tc.ready || r.TimedOut != tc.timedOut || r.Ended() != (!tc.ready && !tc.timedOut) {
				t.Fatalf("Ready: ready %v, timed out %v; want %v, %v", r.Ready, r.TimedOut, tc.ready, tc.timedOut)
			}
			if string(r.Match.Line) != tc.line || r.Job.ID != j.ID || r.Job.Status != tc.status {
				t.Errorf("Ready: line %q, job %s %s; want %q, %s %s", r.Match.Line, r.Job.ID, r.Job.Status, tc.line, j.ID, tc.status)
			}
			if tc.exitCode != 0 && (r.Job.ExitCode == nil || *r.Job.ExitCode != tc.exitCode) {
				t.Errorf("Ready: exit code %v, want %d", r.Job.ExitCode, tc.exitCode)
			}
			jobs, err := c.Status(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.ready {
				if r.Job.ReadyAt != nil || jobs[0].ReadyAt != nil {
					t.Errorf("ready_at %v, status's %v; want none", r.Job.ReadyAt, jobs[0].ReadyAt)
				}
				return
			}
			at := r.Job.ReadyAt
			if at == nil || at.Before(before) || at.After(time.Now()) || jobs[0].ReadyAt == nil || !jobs[0].ReadyAt.Equal(*at) {
				t.Fatalf("ready_at %v, status's %v; want one time between %v and now", at, jobs[0].ReadyAt, before)
			}
			again, err := c.Ready(ctx, j.ID, "Listening on", bgjob.ReadyOptions{Timeout: 2 * time.Second})
			if err != nil || again.Job.ReadyAt == nil || !again.Job.ReadyAt.Equal(*at) {
				t.Errorf("a second Ready: ready_at %v, %v; want the first, %v", again.Job.ReadyAt, err, at)
			}
		})
	}
}
