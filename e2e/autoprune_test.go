package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestRunPrunes: run removes, in the background, the oldest ended jobs
// beyond the newest kept ended ones, and never a running one.
func TestRunPrunes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(0, 0), bg.WithAutoPruneEvery(1))
	if err != nil {
		t.Fatal(err)
	}
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
	// is one still running, by a client that keeps 2.
	pruner, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(2, 0), bg.WithAutoPruneEvery(1))
	if err != nil {
		t.Fatal(err)
	}
	trigger, err := pruner.Run(ctx, bg.Spec{Argv: []string{"sleep 60"}})
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

// TestRunPruneKeepsRecent: run's pass removes only ended jobs beyond the
// newest Keep that ended more than the age limit ago, as run --keep's help
// says: of five ended jobs beyond keep 1, the two that ended 10 days ago
// go and the two that ended an hour ago stay (the pass pruned every job
// beyond keep, or older than the limit).
func TestRunPruneKeepsRecent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	now := time.Now()
	var old, recent []string
	for i, ago := range []time.Duration{10 * 24 * time.Hour, 10*24*time.Hour - time.Minute, time.Hour, time.Hour - time.Minute, 0} {
		at := now.Add(-ago)
		m := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{Meta: jobdir.Meta{StartedAt: at.Add(-time.Second)}, EndedAt: at}).Meta
		switch {
		case i < 2:
			old = append(old, m.ID)
		case i < 4:
			recent = append(recent, m.ID)
		}
	}
	c, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(1, bg.DefaultMaxAge), bg.WithAutoPruneEvery(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Run(ctx, bg.Spec{Argv: []string{"sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, jobdir.DefaultWorkspace)
	gone := func(id string) bool {
		_, err := os.Lstat(filepath.Join(ws, id))
		return os.IsNotExist(err)
	}
	eventually(10*time.Second, func() bool {
		_, err := os.Lstat(filepath.Join(ws, ".prune.lock"))
		return gone(old[0]) && gone(old[1]) && os.IsNotExist(err)
	})
	for _, id := range old {
		if !gone(id) {
			t.Errorf("job %s, ended 10 days ago beyond keep 1, was not pruned", id)
		}
	}
	for _, id := range recent {
		if gone(id) {
			t.Errorf("job %s, ended an hour ago, was pruned", id)
		}
	}
}
