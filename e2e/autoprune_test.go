package e2e

import (
	"context"
	"testing"
	"time"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestRunPrunes: run removes, in the background, the oldest ended jobs
// beyond the newest kept ended ones, and never a running one.
func TestRunPrunes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c, err := bg.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	c.SetAutoPrune(0, 0)
	c.SetAutoPruneEvery(1)
	ctx := context.Background()
	oldest, err := c.Run(ctx, bg.Spec{Argv: []string{"sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	var ended []string
	for range 5 {
		j, err := c.Run(ctx, bg.Spec{Argv: []string{"exit 0"}})
		if err != nil {
			t.Fatal(err)
		}
		ended = append(ended, j.ID)
	}
	if _, err := c.Wait(ctx, ended, bg.WaitOptions{}); err != nil {
		t.Fatal(err)
	}

	last, err := c.Run(ctx, bg.Spec{Argv: []string{"exit 0"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{last.ID}, bg.WaitOptions{}); err != nil {
		t.Fatal(err)
	}

	// The pass counts ended jobs when it starts, so the run that starts it
	// is one still running.
	c.SetAutoPrune(2, 0)
	trigger, err := c.Run(ctx, bg.Spec{Argv: []string{"sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	// Eight jobs, keep the newest 2 ended: the four oldest ended ones go,
	// never the running ones.
	want := map[string]bool{oldest.ID: true, ended[4]: true, last.ID: true, trigger.ID: true}
	var page bg.Page
	eventually(10*time.Second, func() bool {
		if page, err = c.List(ctx, bg.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		return len(page.Jobs) == len(want)
	})
	if len(page.Jobs) != len(want) {
		t.Fatalf("%d jobs left after run's pruning, want %d", len(page.Jobs), len(want))
	}
	for _, j := range page.Jobs {
		if !want[j.ID] {
			t.Errorf("job %s (%s) should have been pruned", j.ID, j.Status)
		}
		if (j.ID == oldest.ID || j.ID == trigger.ID) && j.Status != jobdir.StatusRunning {
			t.Errorf("the running job %s is %s", j.ID, j.Status)
		}
	}
}
