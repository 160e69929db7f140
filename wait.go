package bgjob

import (
	"context"
	"fmt"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// WaitOptions tunes Wait.
type WaitOptions struct {
	// Any returns when the first job ends.
	Any bool
	// Timeout gives up after this long with ErrTimeout (0: never).
	Timeout time.Duration
}

// Wait blocks until the jobs have ended and returns them. The host polls;
// the caller holds one connection. On timeout it returns the jobs as they
// are and an error wrapping ErrTimeout.
func (c *Client) Wait(ctx context.Context, refs []string, o WaitOptions) ([]jobdir.Job, error) {
	if w, ok := c.rt.(Watcher); ok {
		return c.watchWait(ctx, w, refs, o)
	}
	script, err := shellgen.WaitScript(c.target(), shellgen.Wait{Refs: refs, Any: o.Any, Timeout: o.Timeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, timedOut, err := c.collect(ctx, script, true)
	if err == nil && timedOut {
		err = fmt.Errorf("waiting %s: %w", o.Timeout, ErrTimeout)
	}
	return jobs, err
}

// watchWait waits by watching the job directories: a new exit_code wakes
// it at once. A wrapper killed with SIGKILL changes no file, so it also
// looks again every second.
func (c *Client) watchWait(ctx context.Context, w Watcher, refs []string, o WaitOptions) ([]jobdir.Job, error) {
	jobs, err := c.Status(ctx, refs...)
	if err != nil {
		return jobs, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := make([]string, len(jobs))
	dirs := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i], dirs[i] = j.ID, j.Dir
	}
	events, err := w.Watch(ctx, dirs)
	if err != nil {
		return nil, err
	}
	var deadline <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if jobs, err = c.Status(ctx, ids...); err != nil {
			return jobs, err
		}
		if waitDone(jobs, o.Any) {
			return jobs, nil
		}
		select {
		case name := <-events:
			if name != jobdir.ExitCodeFile {
				continue
			}
		case <-tick.C:
		case <-deadline:
			return jobs, fmt.Errorf("waiting %s: %w", o.Timeout, ErrTimeout)
		case <-ctx.Done():
			return jobs, ctx.Err()
		}
	}
}

// waitDone reports whether all jobs (or, with any, one job) have ended.
func waitDone(jobs []jobdir.Job, any bool) bool {
	ended := 0
	for _, j := range jobs {
		if j.Status.Ended() || j.Status == jobdir.StatusUnreadable {
			ended++
		}
	}
	return ended == len(jobs) || any && ended > 0
}
