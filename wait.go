package bgjob

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// WaitOptions tunes Wait.
type WaitOptions struct {
	// Any returns when the first job ends.
	Any bool
	// Timeout gives up after this long with ErrTimeout (0: never).
	Timeout time.Duration
	// Since, when not zero, is when the wait began, before its caller
	// connected: Timeout counts from it, and the error names Timeout.
	Since time.Time
	// Labels, unless empty, waits for the jobs of the workspace that have
	// every one of these labels (ListOptions.Labels) and still run or are
	// queued; when none does, it returns those that have ended at once.
	// It takes no refs.
	Labels map[string]string
}

// Wait blocks until the jobs have ended and returns them. Over SSH the
// host polls, inside one script, and the caller holds one connection; on a
// runtime that is a Watcher the same script looks once each time a job
// file changes (and once a second, for a wrapper killed without a trace).
// On timeout it returns the jobs as they are and an error wrapping
// ErrTimeout. The timeout holds on the client's clock too, whatever the
// host does: a host that has not answered a second after it is given up
// on, its script there ended, and the jobs are those of the last look,
// or of one look at them bounded by standingGrace (none if that finds no
// answer either).
func (c *Client) Wait(ctx context.Context, refs []string, o WaitOptions) (jobs []jobdir.Job, err error) {
	if len(o.Labels) > 0 {
		if refs, err = c.waitLabelled(ctx, refs, o.Labels); err != nil || len(refs) == 0 {
			return []jobdir.Job{}, err
		}
	}
	parent := ctx
	ctx, end := waitBound(ctx, o.Timeout, o.Since)
	// Whether the host began a script of the wait: one that never did
	// (a stalled host) gets no look after it either, which would only
	// make the wait standingGrace longer than its timeout.
	var begun atomic.Bool
	began := func() { begun.Store(true) }
	defer func() {
		err = end(err)
		if jobs == nil && errors.Is(err, ErrTimeout) && parent.Err() == nil {
			if begun.Load() {
				jobs = c.standing(parent, refs)
			}
		}
	}()
	left := timeLeft(o.Timeout, o.Since)
	q := shellgen.Wait{Refs: refs, Any: o.Any, Timeout: left}
	w, watch := c.rt.(Watcher)
	if !watch {
		return c.wait(ctx, q, o.Timeout, began)
	}
	q.Once, q.Timeout = true, 0
	jobs, err = c.wait(ctx, q, o.Timeout, began)
	if !errors.Is(err, errPending) {
		return jobs, err
	}
	dirs := make([]string, len(jobs))
	for i, j := range jobs {
		dirs[i] = j.Dir
	}
	exited := func(name string) bool { return name == jobdir.ExitCodeFile }
	timedOut, err := watched(ctx, w, dirs, left, exited, func(ctx context.Context) error {
		looked, err := c.wait(ctx, q, o.Timeout, began)
		if looked != nil {
			jobs = looked
		}
		return err
	})
	if timedOut && errors.Is(err, errPending) {
		err = fmt.Errorf("waiting %s: %w", waitLabel(o.Timeout), ErrTimeout)
	}
	return jobs, err
}

// standing returns the jobs refs name as they stand, or nil when the host
// does not answer within standingGrace: a wait that timed out without the
// host's answer still reports the jobs when it can. The look runs aside and
// is left to its context at the bound, as a stalled SSH channel need not
// end when its context does.
func (c *Client) standing(ctx context.Context, refs []string) []jobdir.Job {
	ctx, cancel := context.WithTimeout(ctx, standingGrace)
	defer cancel()
	type looked struct {
		jobs []jobdir.Job
		err  error
	}
	ch := make(chan looked, 1)
	go func() {
		jobs, err := c.Status(ctx, refs...)
		ch <- looked{jobs, err}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			return nil
		}
		return l.jobs
	case <-ctx.Done():
		return nil
	}
}

// wait runs one WaitScript and returns the jobs it reports; when the script
// did not see them end, the error wraps ErrTimeout (naming timeout, the
// wait's whole) or errPending. began is called when the host has begun
// the script.
func (c *Client) wait(ctx context.Context, q shellgen.Wait, timeout time.Duration, began func()) ([]jobdir.Job, error) {
	req, err := shellgen.WaitRequest(c.target(), q)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		jobs  []jobdir.Job
		errs  []error
		state string
	)
	err = c.look(ctx, req, !q.Once, records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil }),
		Refused: c.gather(&errs),
		Wait:    func(s string) { state = s },
		Begun:   began,
	})
	switch {
	case err != nil:
		return nil, err
	case len(errs) > 0:
		return jobs, errors.Join(errs...)
	case state == "timeout":
		return jobs, fmt.Errorf("waiting %s: %w", waitLabel(timeout), ErrTimeout)
	case state == "pending":
		return jobs, errPending
	}
	return jobs, nil
}
