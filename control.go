package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Send writes data to the standard input of a job started with Stdin, or
// with eof closes it, so that the job reads end of file. It returns the job.
func (c *Client) Send(ctx context.Context, ref string, data io.Reader, eof bool) (jobdir.Job, error) {
	script, err := shellgen.SendScript(c.target(), ref, eof)
	if err != nil {
		return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if data == nil || eof {
		data = strings.NewReader("")
	}
	var (
		job  jobdir.Job
		errs []error
	)
	err = c.execStdin(ctx, script, data, func(ev shellgen.Event) error {
		switch {
		case ev.Job != nil:
			job = c.derive(ev.Job)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		}
		return nil
	})
	if err != nil {
		return job, err
	}
	return job, errors.Join(errs...)
}

// StopOptions tunes Stop.
type StopOptions struct {
	// Signal is sent first ("" for TERM); KILL follows after Grace
	// (DefaultGrace when 0).
	Signal string
	Grace  time.Duration
	// All stops every job of the workspace that has live processes.
	All bool
}

// Stop stops jobs and returns once their process groups are gone. It is
// idempotent: a job that has ended keeps its status, and only processes it
// left behind that can be tied to it are killed.
func (c *Client) Stop(ctx context.Context, refs []string, o StopOptions) ([]jobdir.Job, error) {
	if o.Signal == "" {
		o.Signal = "TERM"
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	script, err := shellgen.StopScript(c.target(), shellgen.Stop{Refs: refs, All: o.All, Signal: o.Signal, Grace: o.Grace})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, _, err := c.collect(ctx, script, false)
	return jobs, err
}

// Remove deletes jobs and their files. A job with live processes is
// refused with ErrBusy unless force, which stops it first.
func (c *Client) Remove(ctx context.Context, refs []string, force bool) ([]string, error) {
	removed, errs, err := c.remove(ctx, shellgen.Remove{Refs: refs, Force: force, Grace: DefaultGrace})
	if err != nil {
		return nil, err
	}
	return removed, errors.Join(errs...)
}

// remove runs a RemoveScript and returns the directories it removed and
// its refusals, one error each.
func (c *Client) remove(ctx context.Context, r shellgen.Remove) ([]string, []error, error) {
	t := c.target()
	script, err := shellgen.RemoveScript(t, r)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		removed []string
		errs    []error
	)
	err = c.exec(ctx, script, false, func(ev shellgen.Event) error {
		switch {
		case ev.Removed != "":
			removed = append(removed, ev.Removed)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return removed, errs, nil
}

// PruneOptions selects the ended jobs Prune removes: those beyond the
// newest Keep ended jobs, and those that ended more than OlderThan ago.
type PruneOptions struct {
	Keep      int
	OlderThan time.Duration
	// DryRun reports what would be removed without removing it.
	DryRun bool
}

// Prune removes ended jobs of the workspace (never running, unreadable or
// still-busy ones: an ended job whose processes live on is skipped) and
// returns them. With DryRun it returns the candidates, busy ones included.
func (c *Client) Prune(ctx context.Context, o PruneOptions) ([]jobdir.Job, error) {
	cutoff := time.Now().Add(-o.OlderThan)
	var victims []jobdir.Job
	kept := 0
	_, err := c.ListFunc(ctx, ListOptions{}, func(j jobdir.Job) error {
		if !j.Status.Ended() {
			return nil
		}
		ended := j.StartedAt
		if j.EndedAt != nil {
			ended = *j.EndedAt
		}
		if kept < o.Keep && (o.OlderThan <= 0 || ended.After(cutoff)) {
			kept++
			return nil
		}
		victims = append(victims, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.DryRun || len(victims) == 0 {
		return victims, nil
	}
	dirs := make([]string, len(victims))
	for i, j := range victims {
		dirs[i] = j.Dir
	}
	removed, errs, err := c.remove(ctx, shellgen.Remove{Dirs: dirs})
	if err != nil {
		return nil, err
	}
	gone := make(map[string]bool, len(removed))
	for _, d := range removed {
		gone[d] = true
	}
	victims = slices.DeleteFunc(victims, func(j jobdir.Job) bool { return !gone[j.Dir] })
	// A job that left processes running is kept for a later prune, and one
	// a concurrent prune removed first is done: neither is an error.
	errs = slices.DeleteFunc(errs, func(err error) bool {
		return errors.Is(err, ErrBusy) || errors.Is(err, ErrNotFound)
	})
	return victims, errors.Join(errs...)
}
