package bgjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// DefaultGrace is how long Stop waits after the first signal before
// SIGKILL when not told otherwise.
//
// A grace (Spec.Grace, StopOptions.Grace) is a *time.Duration with one
// meaning of zero everywhere, as the CLI's --grace 0 and the MCP server's
// grace_sec 0: no grace. TERM, the default signal, then becomes KILL,
// sent at once (a TERM followed at once by KILL would only race the job's
// handler); another signal is sent and KILL right after it. nil is
// DefaultGrace; a negative grace is refused (ErrUsage).
//
//	bgjob.StopOptions{Grace: new(500 * time.Millisecond)}
//	bgjob.StopOptions{Grace: new(time.Duration(0))} // KILL at once
const DefaultGrace = 2 * time.Second

// graceOf is the grace g gives, checked: DefaultGrace when nil.
func graceOf(g *time.Duration) (time.Duration, error) {
	switch {
	case g == nil:
		return DefaultGrace, nil
	case *g < 0:
		return 0, fmt.Errorf("%w: grace %s must not be negative", ErrUsage, *g)
	}
	return *g, nil
}

// StopOptions tunes Stop.
type StopOptions struct {
	// Signal is sent first ("" for TERM); KILL follows after Grace (nil:
	// DefaultGrace; 0: at once).
	Signal string
	Grace  *time.Duration
	// All stops every job of the workspace that has live processes.
	All bool
	// Labels, unless empty, stops the jobs of the workspace that have
	// every one of these labels (ListOptions.Labels) and still run or have
	// live processes, as All does of every job; it takes no refs.
	Labels map[string]string
	// Reason is recorded as the stop's reason, the Job.Reason of a job it
	// ends: ReasonStop ("" too), or ReasonSessionEnd for the jobs of a
	// session that has ended (the MCP server's at its end, an owner's
	// that is gone). Another is refused (ErrUsage).
	Reason string
}

// The reasons a stop records (StopOptions.Reason); a --timeout records
// "timeout".
const (
	ReasonStop       = "stop"
	ReasonSessionEnd = "session_end"
)

// Stop stops jobs and returns once their process groups are gone. It is
// idempotent: a job that has ended keeps its status, and only processes it
// left behind that can be tied to it are killed.
func (c *Client) Stop(ctx context.Context, refs []string, o StopOptions) ([]jobdir.Job, error) {
	if o.Signal == "" {
		o.Signal = "TERM"
	}
	grace, err := graceOf(o.Grace)
	if err != nil {
		return nil, err
	}
	switch o.Reason {
	case "", ReasonStop, ReasonSessionEnd:
	default:
		return nil, fmt.Errorf("%w: stop reason %q: want %q or %q", ErrUsage, o.Reason, ReasonStop, ReasonSessionEnd)
	}
	if len(o.Labels) > 0 {
		if len(refs) > 0 || o.All {
			return nil, fmt.Errorf("%w: a stop by labels takes no job references and no all", ErrUsage)
		}
		if refs, err = c.labelled(ctx, o.Labels, func(j jobdir.Job) bool { return j.Status.Active() || j.LiveProcesses > 0 }); err != nil || len(refs) == 0 {
			return []jobdir.Job{}, err
		}
	}
	script, err := shellgen.StopScript(c.target(), shellgen.Stop{Refs: refs, All: o.All, Signal: o.Signal, Grace: grace, Reason: o.Reason})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, err := c.collect(ctx, script)
	errs := []error{err}
	for _, j := range jobs {
		// The stop waited for the wrapper to record how the job ended:
		// one that has not is not stopped, whatever was signalled.
		if j.Status.Active() {
			errs = append(errs, &Error{Kind: KindBusy, Ref: j.ID, Err: errors.New("still running after the stop: its wrapper has not recorded an end")})
		} else if j.LiveProcesses > 0 {
			// Its wrapper has ended, but the stop's last look still found
			// some of its processes: started anew as fast as they were
			// killed, for the seconds KILL was sent again and again.
			errs = append(errs, &Error{Kind: KindBusy, Ref: j.ID, Err: fmt.Errorf("%d of its processes still alive after the stop", j.LiveProcesses)})
		}
	}
	return jobs, errors.Join(errs...)
}
