package bgjob

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// labelled returns the ids of the jobs of the workspace that have every one
// of labels and that keep selects, newest first: the selection by labels
// of Stop, WaitAny and Prune, made by List (ListOptions.Labels).
func (c *Client) labelled(ctx context.Context, labels map[string]string, keep func(jobdir.Job) bool) ([]string, error) {
	var ids []string
	_, err := c.ListFunc(ctx, ListOptions{Labels: labels}, func(j jobdir.Job) error {
		if keep(j) {
			ids = append(ids, j.ID)
		}
		return nil
	})
	return ids, err
}

// waitLabelled returns the ids Wait waits for with WaitOptions.Labels: the
// jobs with labels that run or are queued, or, when none does, all of
// them.
func (c *Client) waitLabelled(ctx context.Context, refs []string, labels map[string]string) ([]string, error) {
	if len(refs) > 0 {
		return nil, fmt.Errorf("%w: a wait by labels takes no job references", ErrUsage)
	}
	var all []string
	active, err := c.labelled(ctx, labels, func(j jobdir.Job) bool {
		all = append(all, j.ID)
		return j.Status.Active()
	})
	if len(active) == 0 {
		return all, err
	}
	return active, err
}

// pruneLabelled is Prune with PruneOptions.Labels: the rule of prune.sh
// (bg_prunable) applied in Go to the ended jobs with the labels, newest
// first, and Remove for those it selects that have no live processes.
func (c *Client) pruneLabelled(ctx context.Context, o PruneOptions) ([]jobdir.Job, error) {
	var ended []jobdir.Job
	_, err := c.ListFunc(ctx, ListOptions{Labels: o.Labels}, func(j jobdir.Job) error {
		if !j.Status.Active() && j.Status != jobdir.StatusUnreadable {
			ended = append(ended, j)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var chosen []jobdir.Job
	for i, j := range ended {
		if !o.prunes(i, j, now) {
			continue
		}
		if j.LiveProcesses > 0 {
			if o.Kept != nil {
				o.Kept(j)
			}
			continue
		}
		chosen = append(chosen, j)
	}
	if !o.DryRun && len(chosen) > 0 {
		ids := make([]string, len(chosen))
		for i, j := range chosen {
			ids[i] = j.ID
		}
		removed, rmErr := c.Remove(ctx, ids, RemoveOptions{})
		chosen = slices.DeleteFunc(chosen, func(j jobdir.Job) bool { return !slices.Contains(removed, j.Dir) })
		// A job a concurrent prune removed first is done, as prune's.
		err = IgnoreNotFound(rmErr)
	}
	if o.Pruned != nil {
		for _, j := range chosen {
			o.Pruned(j)
		}
		chosen = nil
	}
	return chosen, err
}

// prunes reports whether o's rule selects the ended job j, the i-th
// newest of the ended jobs: All; beyond the newest Keep, or ended more
// than OlderThan before now (either limit).
func (o PruneOptions) prunes(i int, j jobdir.Job, now time.Time) bool {
	if o.All {
		return true
	}
	byCount := o.Keep > 0 && i >= o.Keep
	byAge := o.OlderThan > 0 && j.EndedAt != nil && now.Sub(*j.EndedAt) > o.OlderThan
	return byCount || byAge
}
