package bgjob

import (
	"context"
	"fmt"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// DefaultGrace is how long Stop waits after the first signal before SIGKILL.
const DefaultGrace = 2 * time.Second

// NoGrace, as a Grace, sends KILL right after the first signal (a Grace of
// 0 means DefaultGrace).
const NoGrace time.Duration = -1

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
