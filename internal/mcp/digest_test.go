package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
)

// TestDigestTellsEachEndOnce: the first tool result after a job the
// client started ends carries its ended event (and a line of text) once;
// the results after it do not; a job that ended within its own job_start
// is told by that result, not again.
func TestDigestTellsEachEndOnce(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var quick job
	call(t, cs, "job_start", map[string]any{"command": "exit 0", "name": "quick"}, &quick)
	if quick.Status != "exited" {
		t.Fatalf("quick: %s, want it ended within job_start's wait", quick.Status)
	}
	var started job
	call(t, cs, "job_start", map[string]any{"command": "sleep 0.3; exit 2", "name": "build", "wait_sec": 0}, &started)
	type told struct {
		Events []bgjob.Event `json:"events"`
	}
	var got []bgjob.Event
	var line string
	for deadline := time.Now().Add(time.Minute); len(got) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no result told the end of build within a minute")
		}
		var d told
		res := call(t, cs, "job_list", map[string]any{}, &d)
		got, line = d.Events, text(res)
	}
	if len(got) != 1 || got[0].ID != started.ID || got[0].Event != bgjob.EventEnded || got[0].ExitCode == nil || *got[0].ExitCode != 2 {
		t.Fatalf("events %+v, want build's end with exit code 2, alone", got)
	}
	if !strings.Contains(line, "since your last call: job build exited 2 after ") {
		t.Errorf("text %q, want the line that tells build's end", line)
	}
	var d told
	res := call(t, cs, "job_list", map[string]any{}, &d)
	if len(d.Events) != 0 || strings.Contains(text(res), "since your last call") {
		t.Errorf("the next result told again: %+v %q", d.Events, text(res))
	}
}

// TestWaitWithoutIDs: job_wait without ids waits for the first of the
// jobs this client started that are still running, and its result, which
// shows the job ended, is not followed by a digest that tells it again;
// with none running it says so.
func TestWaitWithoutIDs(t *testing.T) {
	cs := serve(t, mcp.Options{})
	res := callRaw(t, cs, "job_wait", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "no job you started on this host is running") {
		t.Fatalf("job_wait without ids and jobs: %q, want an error that says none runs", text(res))
	}
	var slow, quick job
	call(t, cs, "job_start", map[string]any{"command": "sleep 60", "name": "slow", "wait_sec": 0}, &slow)
	call(t, cs, "job_start", map[string]any{"command": "sleep 0.5; exit 4", "name": "quick", "wait_sec": 0}, &quick)
	var w struct {
		waited
		Events []bgjob.Event `json:"events"`
	}
	res = call(t, cs, "job_wait", map[string]any{"timeout_sec": 60}, &w)
	if w.TimedOut || len(w.Jobs) != 2 {
		t.Fatalf("job_wait: %+v, want both jobs, not timed out", w)
	}
	for _, j := range w.Jobs {
		if j.ID == quick.ID && exitCode(j) != 4 || j.ID == slow.ID && j.Status != "running" {
			t.Errorf("job %s: %s %v", j.ID, j.Status, j.ExitCode)
		}
	}
	if len(w.Events) != 0 || strings.Contains(text(res), "since your last call") {
		t.Errorf("job_wait's result tells the end it shows again: %+v", w.Events)
	}
	var d struct {
		Events []bgjob.Event `json:"events"`
	}
	call(t, cs, "job_list", map[string]any{}, &d)
	if len(d.Events) != 0 {
		t.Errorf("job_list after the wait tells %+v, want nothing new", d.Events)
	}
	callRaw(t, cs, "job_stop", map[string]any{"ids": []string{slow.ID}})
}

// TestWaitWithoutIDsAfterARemoval: a job of the client's removed before
// its end was told is forgotten: job_wait without ids waits for the
// others, and the digest looks for it no more.
func TestWaitWithoutIDsAfterARemoval(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	var gone, live job
	call(t, cs, "job_start", map[string]any{"command": "sleep 1; exit 7", "name": "live", "wait_sec": 0}, &live)
	call(t, cs, "job_start", map[string]any{"command": "sleep 0.3; exit 1", "name": "gone", "wait_sec": 0}, &gone)
	// Removed from outside (bgjob rm) once ended, before a result told it.
	dir := filepath.Join(root, "default", gone.ID)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "exit_code")); err == nil && strings.HasSuffix(string(b), "\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gone did not end within a minute")
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	var w waited
	call(t, cs, "job_wait", map[string]any{"timeout_sec": 30}, &w)
	if len(w.Jobs) != 1 || w.Jobs[0].ID != live.ID || exitCode(w.Jobs[0]) != 7 {
		t.Fatalf("job_wait without ids: %+v, want live's end", w.Jobs)
	}
}
