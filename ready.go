package bgjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// ReadyOptions tunes Ready.
type ReadyOptions struct {
	// Timeout gives up after this long (0: never): the Readiness is
	// TimedOut, and the job goes on.
	Timeout time.Duration
	// Rewound is WaitForOptions.Rewound.
	Rewound func(stream string)
}

// Readiness is what Ready found, one of three outcomes: Ready (a line
// matched, Match), TimedOut (the timeout came first, and the job goes
// on), or neither (Ended: the job ended first, and Job tells how).
type Readiness struct {
	// Job is the job as the wait last saw it; once Ready, with its
	// ReadyAt.
	Job   jobdir.Job
	Ready bool
	Match Match
	// Port is the port found, once Ready, by ReadyPort.
	Port     jobdir.Port
	TimedOut bool
}

// Ended reports that the job ended before a line of its output matched.
func (r Readiness) Ended() bool { return !r.Ready && !r.TimedOut }

// Ready waits, as WaitFor does, until a line of the job's output matches
// pattern (a POSIX extended regular expression), and records when it saw
// it, by this machine's clock, in the job's ready_at file (Job.ReadyAt,
// which every later look at the job reports). A job that ends first, and
// a timeout, are outcomes, not errors (Readiness); the error is a
// pattern refused (ErrUsage), a job not found, or a host that failed.
// A line seen but not recorded (the ready_at file cannot be written)
// returns the Readiness with the error.
func (c *Client) Ready(ctx context.Context, ref, pattern string, o ReadyOptions) (Readiness, error) {
	j, m, err := c.WaitFor(ctx, ref, pattern, WaitForOptions{Timeout: o.Timeout, Rewound: o.Rewound})
	r, err := c.readiness(ctx, j, err)
	r.Match = m // zero unless WaitFor found the line
	return r, err
}

// readiness is the Readiness of a wait for job j that ended with err: the
// timeout and the job's end are outcomes, not errors; a wait that found
// what it waited for records it (markReady), and the job as the ready
// script saw it replaces j.
func (c *Client) readiness(ctx context.Context, j jobdir.Job, err error) (Readiness, error) {
	switch {
	case errors.Is(err, ErrTimeout):
		return Readiness{Job: j, TimedOut: true}, nil
	case errors.Is(err, ErrNoMatch):
		return Readiness{Job: j}, nil
	case err != nil:
		return Readiness{Job: j}, err
	}
	r := Readiness{Job: j, Ready: true}
	marked, err := c.markReady(ctx, j.ID, time.Now())
	if err != nil {
		return r, fmt.Errorf("recording that job %s is ready: %w", j.ID, err)
	}
	r.Job = marked
	return r, nil
}

// markReady runs the ready script: job id's ready_at becomes at, unless
// it has one. It returns the job as the script then saw it.
func (c *Client) markReady(ctx context.Context, id string, at time.Time) (jobdir.Job, error) {
	script, err := shellgen.ReadyScript(c.target(), shellgen.Ready{Ref: id, At: at})
	if err != nil {
		return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, err := c.collect(ctx, script)
	var job jobdir.Job
	if len(jobs) > 0 {
		job = jobs[len(jobs)-1]
	}
	return job, err
}
