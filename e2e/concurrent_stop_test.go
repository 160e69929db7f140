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
			t.Fatalf("round %d: job is %s (exit %v), want killed 143", i, j.Status, j.ExitCode)
		}
	}
}
