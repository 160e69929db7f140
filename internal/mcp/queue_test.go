package mcp_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// TestStartQueue: job_start takes slots, after and after_ok: a job behind
// one that holds the only slot is queued (detail "slot"), one after_ok a
// job that exits 3 ends not_run without an exit code, and when the
// session ends its queued job is stopped with the running one and never
// runs.
func TestStartQueue(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Root: root}, nil)
	type view struct {
		ID       string        `json:"id"`
		Status   jobdir.Status `json:"status"`
		ExitCode *int          `json:"exit_code"`
		Reason   string        `json:"reason"`
		Detail   string        `json:"detail"`
	}
	var hold, queued, fails, notRun view
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "slots": 1, "wait_sec": 0}, &hold)
	call(t, cs, "job_start", map[string]any{"command": "echo ran", "slots": 1, "wait_sec": 0}, &queued)
	if queued.Status != jobdir.StatusQueued || queued.Detail != "slot" {
		t.Errorf("a job behind the only slot: %s %q, want queued, slot", queued.Status, queued.Detail)
	}
	call(t, cs, "job_start", map[string]any{"command": "exit 3", "name": "fails"}, &fails)
	call(t, cs, "job_start", map[string]any{"command": "echo ran", "after_ok": []string{"fails"}, "wait_sec": 5}, &notRun)
	if notRun.Status != jobdir.StatusNotRun || notRun.ExitCode != nil || notRun.Reason != "after_ok" || notRun.Detail != "job "+fails.ID+" exited 3" {
		t.Errorf("after_ok a job that exited 3: %+v, want not_run, no exit code, after_ok, job %s exited 3", notRun, fails.ID)
	}
	if res := callRaw(t, cs, "job_start", map[string]any{"command": "true", "after": []string{"nosuch"}}); !res.IsError {
		t.Errorf("job_start after a job that does not exist succeeded: %s", text(res))
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), hold.ID, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Status != jobdir.StatusKilled {
			t.Errorf("after the session, job %s is %s, want killed", j.ID, j.Status)
		}
	}
	var stdout, stderr bytes.Buffer
	if _, err := c.Logs(context.Background(), queued.ID, bgjob.LogOptions{}, &stdout, &stderr); err != nil || stdout.Len() > 0 {
		t.Errorf("the queued job stopped with the session: output %q, %v; want none: it never ran", stdout.String(), err)
	}
}
