package bgjob

import (
	"context"
	"fmt"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// AnyPort is the port WaitPort takes for any port: the first TCP port the
// job listens on.
const AnyPort = 0

// portPoll is how often WaitPort looks at the job's ports.
const portPoll = 200 * time.Millisecond

// WaitPortOptions tunes WaitPort.
type WaitPortOptions struct {
	// Timeout gives up after this long with ErrTimeout (0: never).
	Timeout time.Duration
	// Since, when not zero, is when the wait began, before its caller
	// connected: Timeout counts from it.
	Since time.Time
}

// WaitPort blocks until one of the job's live processes listens on TCP
// port (AnyPort: on any port), and returns the job, with its Ports, and
// the port found. Its outcomes are WaitFor's: the port found (nil
// error); the job ended first (the error wraps ErrNoMatch, and the job
// tells how it ended); the timeout (ErrTimeout). It looks at the job's
// ports (StatusWith, Ports) five times a second, on the host of the
// client, until one of them comes.
func (c *Client) WaitPort(ctx context.Context, ref string, port int, o WaitPortOptions) (jobdir.Job, jobdir.Port, error) {
	if port < 0 || port > 65535 {
		return jobdir.Job{}, jobdir.Port{}, fmt.Errorf("%w: port %d: want 1 to 65535, or any", ErrUsage, port)
	}
	what := "port " + portLabel(port)
	left := timeLeft(o.Timeout, o.Since)
	var deadline <-chan time.Time
	if left > 0 {
		t := time.NewTimer(left)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(portPoll)
	defer tick.Stop()
	for {
		jobs, err := c.StatusWith(ctx, StatusOptions{Ports: true}, ref)
		if err != nil {
			return jobdir.Job{}, jobdir.Port{}, err
		}
		if len(jobs) != 1 {
			return jobdir.Job{}, jobdir.Port{}, fmt.Errorf("job %s: %w", ref, ErrNotFound)
		}
		j := jobs[0]
		for _, p := range j.Ports {
			if port == AnyPort || p.Port == port {
				return j, p, nil
			}
		}
		// A job is over for a port once its wrapper has ended and no
		// process of it is left: one left running may still listen.
		if !j.Status.Active() && j.LiveProcesses == 0 {
			return j, jobdir.Port{}, fmt.Errorf("job %s %s before it listened on %s: %w", j.ID, j.Status, what, ErrNoMatch)
		}
		select {
		case <-ctx.Done():
			return j, jobdir.Port{}, context.Cause(ctx)
		case <-deadline:
			return j, jobdir.Port{}, fmt.Errorf("waiting %s for %s: %w", waitLabel(o.Timeout), what, ErrTimeout)
		case <-tick.C:
		}
	}
}

// portLabel is port as errors name it: its number, or "any".
func portLabel(port int) string {
	if port == AnyPort {
		return "any"
	}
	return fmt.Sprint(port)
}

// ReadyPort is Ready for a port: it waits, as WaitPort does, until one of
// the job's processes listens on TCP port (AnyPort: any), and records
// when it saw it in the job's ready_at file. The Readiness has the port
// found (Port) once Ready.
func (c *Client) ReadyPort(ctx context.Context, ref string, port int, o ReadyOptions) (Readiness, error) {
	j, p, err := c.WaitPort(ctx, ref, port, WaitPortOptions{Timeout: o.Timeout})
	r, err := c.readiness(ctx, j, err)
	if r.Ready {
		r.Port = p
		// The look that found the port counted the processes; the
		// ready script does not.
		r.Job.Ports, r.Job.LiveProcesses, r.Job.ProcessScan = j.Ports, j.LiveProcesses, j.ProcessScan
	}
	return r, err
}
