package bgjob_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestPrunePrunedStreams: with Pruned, Prune hands over each job it
// removes (with DryRun, each it selects), the same jobs it returns
// without it, and returns none; a job that stays is not handed over.
func TestPrunePrunedStreams(t *testing.T) {
	root := t.TempDir()
	var ids []string
	for range 5 {
		ids = append(ids, jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Exited}).Meta.ID)
	}
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want, err := c.Prune(ctx, bgjob.PruneOptions{Keep: 2, DryRun: true})
	if err != nil || len(want) != 3 {
		t.Fatalf("dry run without Pruned: %d jobs, %v; want 3", len(want), err)
	}
	for _, dry := range []bool{true, false} {
		var got []string
		jobs, err := c.Prune(ctx, bgjob.PruneOptions{Keep: 2, DryRun: dry, Pruned: func(j jobdir.Job) { got = append(got, j.ID) }})
		if err != nil || jobs != nil {
			t.Fatalf("dry run %v: returned %d jobs, %v; want none", dry, len(jobs), err)
		}
		if len(got) != len(want) {
			t.Fatalf("dry run %v: handed over %v, want %d", dry, got, len(want))
		}
		for _, j := range want {
			if !slices.Contains(got, j.ID) {
				t.Errorf("dry run %v: %s not handed over (got %v)", dry, j.ID, got)
			}
		}
	}
	for _, id := range ids {
		_, err := os.Stat(filepath.Join(root, jobdir.DefaultWorkspace, id))
		if gone := slices.ContainsFunc(want, func(j jobdir.Job) bool { return j.ID == id }); gone != os.IsNotExist(err) {
			t.Errorf("job %s: removed %v, want %v", id, os.IsNotExist(err), gone)
		}
	}
}
