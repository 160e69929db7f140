package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
)

// TestConcurrentStops: several bgjob stop calls at once on one job all
// leave it killed with 143. A later stop's signals must not kill the
// wrapper's own bookkeeping (the rename of exit_code) into a lost job.
func TestConcurrentStops(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	for i := range 8 {
		code, id, errs := bgjob(ctx, "--root", root, "run", "-q", "--", "sleep 60")
		if code != 0 {
			t.Fatalf("run: %d %s", code, errs)
		}
		id = strings.TrimSpace(id)
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code, _, errs := bgjob(ctx, "--root", root, "stop", "--grace", "100ms", id); code != 0 {
					t.Errorf("stop: %d %s", code, errs)
				}
			}()
		}
		wg.Wait()
		_, out, _ := bgjob(ctx, "--root", root, "status", "--json", id)
		var jobs []jobdir.Job
		if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
			t.Fatalf("status: %v %q", err, out)
		}
		if j := jobs[0]; j.Status != jobdir.StatusKilled || j.ExitCode == nil || *j.ExitCode != 143 {
			t.Fatalf("round %d: job is %s (exit %d), want killed 143", i, j.Status, derefCode(j.ExitCode))
		}
	}
}

// TestStopsAndRemovesRace: 25 stops and 15 rm --force at once on one job:
// every call reports something. A stop reports the job, or, when an rm
// removed it first, that it is not found; an rm removes it or says it is
// not found; no call prints nothing.
func TestStopsAndRemovesRace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	code, id, errs := bgjob(ctx, "--root", root, "run", "-q", "--", "sleep 60")
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"--root", root, "stop", "--grace", "100ms", id}
			if i%8 < 3 {
				args = []string{"--root", root, "rm", "--force", id}
			}
			code, out, errs := bgjob(ctx, args...)
			switch {
			case code == 0 && strings.Contains(out, id):
			case code != 0 && strings.Count(errs, "not found") == 1:
			default:
				t.Errorf("%s: exit %d, stdout %q, stderr %q: want the job, or not found said once", args[2], code, out, errs)
			}
		}()
	}
	wg.Wait()
}

// derefCode is *code, or -1 for nil.
func derefCode(code *int) int {
	if code == nil {
		return -1
	}
	return *code
}
