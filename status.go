package bgjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Status reports on the jobs named by refs (ids or names). It returns the
// jobs it found and an error for each it did not.
func (c *Client) Status(ctx context.Context, refs ...string) ([]jobdir.Job, error) {
	return c.StatusWith(ctx, StatusOptions{}, refs...)
}

// StatusOptions selects what StatusWith reports besides the jobs' files
// and processes.
type StatusOptions struct {
	// Ports reports the TCP ports the jobs' live processes listen on
	// (jobdir.Job.Ports), for a look that shows them. On this machine a
	// look at a job with live processes then runs the script that finds
	// them (bg_ports) instead of being answered in Go.
	Ports bool
	// SkipRunningCount does not count the processes of a job whose
	// wrapper runs (jobdir.Job.Processes stays 0 for it), for a look that
	// needs only the jobs' states: no scan of the host's processes for a
	// running job (ListOptions.SkipRunningCount).
	SkipRunningCount bool
}

// StatusWith is Status reporting what o asks besides.
func (c *Client) StatusWith(ctx context.Context, o StatusOptions, refs ...string) ([]jobdir.Job, error) {
	req, err := shellgen.StatusOf(c.target(), shellgen.Status{Refs: refs, Ports: o.Ports, SkipRunningCount: o.SkipRunningCount})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return c.collectLook(ctx, req)
}

// collect runs a script that reports on jobs (stop, prune) and returns
// the jobs and the errors it reported.
func (c *Client) collect(ctx context.Context, script string) ([]jobdir.Job, error) {
	return c.collectHandled(ctx, func(h records.Handler) error { return c.exec(ctx, script, nil, false, h) })
}

// collectLook is collect of a request the runtime may answer (look).
func (c *Client) collectLook(ctx context.Context, req shellgen.Request) ([]jobdir.Job, error) {
	return c.collectHandled(ctx, func(h records.Handler) error { return c.look(ctx, req, false, h) })
}

// collectHandled returns the jobs and the errors that run, given the
// handler of a report on jobs, hands it.
func (c *Client) collectHandled(ctx context.Context, run func(records.Handler) error) ([]jobdir.Job, error) {
	var (
		jobs []jobdir.Job
		errs []error
	)
	err := run(records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil }),
		Refused: c.gather(&errs),
	})
	if err != nil {
		return nil, err
	}
	return jobs, errors.Join(errs...)
}
