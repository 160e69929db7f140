package bgjob_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestPruneLabels: with Labels, Prune's rule counts and removes only the
// jobs with those labels: --keep keeps the newest of them, and the jobs
// without the labels stay, however old.
func TestPruneLabels(t *testing.T) {
	root := t.TempDir()
	mk := func(labels map[string]string) string {
		return jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{Labels: labels}}).Meta.ID
	}
	// Oldest first: ids sort by time.
	var team, other []string
	for i := range 6 {
		if i%2 == 0 {
			team = append(team, mk(map[string]string{"team": "a", "n": "x"}))
		} else {
			other = append(other, mk(map[string]string{"team": "b"}))
		}
	}
	// Newest is last by id, as prune orders jobs: ids made within one
	// millisecond may not sort as they were made.
	slices.Sort(team)
	slices.Sort(other)
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids := func(jobs []jobdir.Job) []string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.ID)
		}
		slices.Sort(s)
		return s
	}
	dry, err := c.Prune(ctx, bgjob.PruneOptions{Keep: 1, DryRun: true, Labels: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(team[:2], ids(dry)); diff != "" {
		t.Errorf("dry run keep 1 of team=a (-want +got):\n%s", diff)
	}
	pruned, err := c.Prune(ctx, bgjob.PruneOptions{Keep: 1, Labels: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(team[:2], ids(pruned)); diff != "" {
		t.Errorf("prune keep 1 of team=a (-want +got):\n%s", diff)
	}
	left, err := c.List(ctx, bgjob.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{team[2]}, other...)
	slices.Sort(want)
	if diff := cmp.Diff(want, ids(left.Jobs)); diff != "" {
		t.Errorf("left after the prune (-want +got):\n%s", diff)
	}
}

// TestRunRefusesMemoryAndCPUs: per-job memory and CPU limits are refused,
// with the reason, and no job is made.
func TestRunRefusesMemoryAndCPUs(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []bgjob.Spec{{Argv: []string{"true"}, Memory: 1 << 30}, {Argv: []string{"true"}, CPUs: 1.5}} {
		if _, err := c.Run(context.Background(), s); !errors.Is(err, bgjob.ErrNoCgroup) || bgjob.KindOf(err) != bgjob.KindNoCgroup {
			t.Errorf("Run(memory %d, cpus %g): %v, want ErrNoCgroup", s.Memory, s.CPUs, err)
		}
	}
	if page, err := c.List(context.Background(), bgjob.ListOptions{}); err != nil || len(page.Jobs) != 0 {
		t.Errorf("after the refusals: %d jobs, %v; want none", len(page.Jobs), err)
	}
}

// TestPruneLabelsTwoAtOnce: two prunes by label at once each remove some
// of the jobs, none twice, and neither fails for the jobs the other
// removed first (a job gone is what a prune wants, as without labels).
func TestPruneLabelsTwoAtOnce(t *testing.T) {
	root := t.TempDir()
	var want []string
	for range 60 {
		want = append(want, jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{Labels: map[string]string{"k": "v"}}}).Meta.ID)
	}
	slices.Sort(want)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  []string
		errs []error
	)
	for range 2 {
		wg.Go(func() {
			c, err := bgjob.NewClient(local.New(), root, "")
			if err != nil {
				t.Error(err)
				return
			}
			jobs, err := c.Prune(context.Background(), bgjob.PruneOptions{All: true, Labels: map[string]string{"k": "v"}})
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			for _, j := range jobs {
				got = append(got, j.ID)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("a prune beside another: %v", err)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the two prunes removed %d jobs (%v), want each of the %d once", len(got), got, len(want))
	}
}
