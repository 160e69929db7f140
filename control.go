package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// SendOptions tunes Send.
type SendOptions struct {
	// EOF closes the job's stdin instead of writing, so that it reads end
	// of file.
	EOF bool
	// Timeout gives up, with an error wrapping ErrTimeout, when the job
	// has not taken the data after this long (0: wait while it runs).
	Timeout time.Duration
}

// Send writes data to the standard input of a job started with Stdin (or
// closes it, see SendOptions) and returns the job once it has taken the
// data. It fails with ErrEnded when the job ends before it has read it
// all; on the host nothing is left behind. At the timeout the error is a
// *DeliveryError where the host tells how much of the data reached the
// job's stdin (which the job still reads).
func (c *Client) Send(ctx context.Context, ref string, data io.Reader, o SendOptions) (jobdir.Job, error) {
	eof := o.EOF
	script, err := shellgen.SendScript(c.target(), shellgen.Send{Ref: ref, EOF: eof, Timeout: o.Timeout})
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
	total := dataSize(data)
	sent := int64(-1)
	err = c.exec(ctx, script, data, false, reply{
		job:       func(j jobdir.Job, _ string) error { job = j; return nil },
		refused:   func(err error) error { errs = append(errs, err); return nil },
		delivered: func(n int64) { sent = n },
	})
	if err != nil {
		return job, err
	}
	if err := errors.Join(errs...); err != nil && sent >= 0 {
		return job, &DeliveryError{Delivered: sent, Total: total, Err: err}
	}
	return job, errors.Join(errs...)
}

// DeliveryError is the error of a Send that failed after Delivered bytes
// of its data had reached the job's stdin, of Total (-1: unknown). It
// wraps the failure (ErrTimeout).
type DeliveryError struct {
	Delivered, Total int64
	Err              error
}

func (e *DeliveryError) Error() string {
	if e.Total >= 0 {
		return fmt.Sprintf("%v (%d of %d bytes delivered)", e.Err, e.Delivered, e.Total)
	}
	return fmt.Sprintf("%v (%d bytes delivered)", e.Err, e.Delivered)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// dataSize returns how many bytes data holds, -1 when it cannot tell: an
// in-memory reader, or the rest of a regular file.
func dataSize(data io.Reader) int64 {
	switch d := data.(type) {
	case interface{ Len() int }:
		return int64(d.Len())
	case *os.File:
		fi, err := d.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := d.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return fi.Size() - off
	}
	return -1
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
	err = c.exec(ctx, script, nil, false, reply{
		removed: func(dir string) error { removed = append(removed, dir); return nil },
		refused: func(err error) error { errs = append(errs, err); return nil },
	})
	if err != nil {
		return nil, nil, err
	}
	return removed, errs, nil
}

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
}

// rule is the prune rule o selects.
func (o PruneOptions) rule() shellgen.Prune {
	return shellgen.Prune{Keep: o.Keep, OlderThan: o.OlderThan, All: o.All, DryRun: o.DryRun}
}

// Prune removes the jobs of the workspace that PruneOptions selects and
// returns them; with DryRun it returns them without removing them. A job
// that still has live processes is never removed: it goes to o.Kept.
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
	script, err := shellgen.PruneScript(c.target(), o.rule())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		jobs []jobdir.Job
		gone = map[string]bool{}
		errs []error
	)
	err = c.exec(ctx, script, nil, false, reply{
		job: func(j jobdir.Job, outcome string) error {
			if outcome == shellgen.OutcomeKept {
				if o.Kept != nil {
					o.Kept(j)
				}
				return nil
			}
			jobs = append(jobs, j)
			return nil
		},
		removed: func(dir string) error { gone[dir] = true; return nil },
		refused: func(err error) error {
			// A job a concurrent prune removed first is done.
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		jobs = slices.DeleteFunc(jobs, func(j jobdir.Job) bool { return !gone[j.Dir] })
	}
	return jobs, errors.Join(errs...)
}
