package bgjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// PruneOptions selects the jobs Prune removes: ended jobs with no live
// process beyond the newest Keep ended jobs of the workspace (0: no count
// limit), and those that ended more than OlderThan ago (0: no age limit)
// by the host's clock; with All, every ended job with no live process.
// Keep and OlderThan both 0 select no job and are refused (ErrUsage), as
// All with either. Run's pruning pass applies the same rule, removing only
// jobs beyond both limits.
type PruneOptions struct {
	Keep      int
	OlderThan time.Duration
	All       bool
	// DryRun reports what would be removed without removing it.
	DryRun bool
	// Kept, unless nil, receives each job the rule selects that stays
	// because it still has live processes (Job.LiveProcesses). A Fleet
	// calls it from one goroutine per host.
	Kept func(jobdir.Job)
	// StopOrphans first stops the jobs whose owner is provably gone, as
	// Client.StopOrphans does (with DryRun, only reports them), and hands
	// each to Stopped, unless nil (from one goroutine per host, as Kept).
	StopOrphans bool
	Stopped     func(jobdir.Job)
	// Pruned, unless nil, receives each job as it is removed (with DryRun,
	// as it is selected), from one goroutine per host, and Prune returns
	// none: at 10,000 jobs the list is megabytes.
	Pruned func(jobdir.Job)
	// Labels, unless empty, prunes among the jobs that have every one of
	// these labels only (ListOptions.Labels): the rule counts and removes
	// those, read by List, and removes them as Remove does.
	Labels map[string]string
}

// rule is the prune rule o selects.
func (o PruneOptions) rule() shellgen.Prune {
	return shellgen.Prune{Keep: o.Keep, OlderThan: o.OlderThan, All: o.All, DryRun: o.DryRun}
}

// Prune removes the jobs of the workspace that PruneOptions selects and
// returns them; with DryRun it returns them without removing them. A job
// that still has live processes is never removed: it goes to o.Kept. A
// prune cut short (ctx done, the host's time up) returns, with its error,
// the jobs it removed before (and o.Pruned has had each of them).
func (c *Client) Prune(ctx context.Context, o PruneOptions) ([]jobdir.Job, error) {
	if err := o.rule().Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var orphanErr error
	if o.StopOrphans {
		var stopped []jobdir.Job
		stopped, orphanErr = c.StopOrphans(ctx, OrphanOptions{DryRun: o.DryRun})
		if o.Stopped != nil {
			for _, j := range stopped {
				o.Stopped(j)
			}
		}
		if ctx.Err() != nil {
			return nil, orphanErr
		}
	}
	jobs, err := c.prune(ctx, o)
	return jobs, errors.Join(orphanErr, err)
}

func (c *Client) prune(ctx context.Context, o PruneOptions) ([]jobdir.Job, error) {
	if len(o.Labels) > 0 {
		return c.pruneLabelled(ctx, o)
	}
	script, err := shellgen.PruneScript(c.target(), o.rule())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		jobs []jobdir.Job
		gone = map[string]bool{}
		errs []error
		// With Pruned, a job waits here for its R record (removed).
		pending = map[string]jobdir.Job{}
		going   = underway{}
	)
	err = c.exec(ctx, script, nil, false, records.Handler{
		Job: c.jobs(func(j jobdir.Job, outcome string) error {
			switch {
			case outcome == records.OutcomeKept:
				if o.Kept != nil {
					o.Kept(j)
				}
			case o.Pruned != nil && o.DryRun:
				o.Pruned(j)
			case o.Pruned != nil:
				pending[j.Dir] = j
			default:
				jobs = append(jobs, j)
			}
			return nil
		}),
		Removing: going.began,
		Removed: func(dir string) error {
			going.done(dir)
			if o.Pruned == nil {
				gone[dir] = true
			} else if j, ok := pending[dir]; ok {
				delete(pending, dir)
				o.Pruned(j)
			}
			return nil
		},
		Refused: c.refused(func(err error) error {
			// A job a concurrent prune removed first is done.
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			return nil
		}),
	})
	if err != nil {
		// Cut short: what it removed before (the script reports each
		// job as it goes).
		if o.DryRun {
			return nil, err
		}
		return slices.DeleteFunc(jobs, func(j jobdir.Job) bool { return !gone[j.Dir] }), going.cut(err)
	}
	if !o.DryRun {
		jobs = slices.DeleteFunc(jobs, func(j jobdir.Job) bool { return !gone[j.Dir] })
	}
	return jobs, errors.Join(errs...)
}
