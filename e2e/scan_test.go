package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// TestScanWindows: a scan reads the environments (where an escapee's job
// id is) only of the processes started since the job it looks at, and
// widens that window as a look meets older jobs (bg_scanenv). ls looks at
// the jobs one after the other, so an older job's escapee, started before
// a job ls looked at first, is found only by a widened window (the third
// widening reads all that is left, a bound on the cost, not on what is
// found). Each job has one process in its group and one escapee: every
// look must count 2, whether status looks at the job alone or ls at all
// five. Fails when bg_live does not widen the window.
func TestScanWindows(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	var ids []string
	for range 5 {
		code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", "setsid sleep 300 & exec sleep 300")...)
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
		// The next job starts at a later clock tick (1/100 s) than this
		// one's escapee.
		time.Sleep(50 * time.Millisecond)
	}
	decode := func(out string) map[string]int {
		t.Helper()
		var jobs []jobdir.Job
		if err := json.Unmarshal([]byte(out), &jobs); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		n := map[string]int{}
		for _, j := range jobs {
			n[j.ID] = j.LiveProcesses
		}
		return n
	}
	// The escapee may take a moment to start: wait until each job's own
	// look counts both.
	for _, id := range ids {
		if !eventually(10*time.Second, func() bool {
			_, out, _ := bgjob(ctx, append(g, "status", "--json", id)...)
			return decode(out)[id] == 2
		}) {
			_, out, _ := bgjob(ctx, append(g, "status", "--json", id)...)
			t.Fatalf("status %s: %s, want 2 live processes (its sleep and its escapee)", id, out)
		}
	}
	code, out, errs := bgjob(ctx, append(g, "ls", "--json")...)
	if code != 0 {
		t.Fatalf("ls: exit %d: %s", code, errs)
	}
	var list struct{ Jobs []jobdir.Job }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Jobs) != len(ids) {
		t.Fatalf("ls --json: %v: %s", err, out)
	}
	n := map[string]int{}
	for _, j := range list.Jobs {
		n[j.ID] = j.LiveProcesses
	}
	for i, id := range ids {
		if n[id] != 2 {
			t.Errorf("ls counts %d live processes of job %d of 5 (%s), want 2 as its status does", n[id], i+1, id)
		}
	}
}
