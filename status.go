package bgjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// collect runs a script that reports on jobs and gathers the jobs and the
// errors it reported.
func (c *Client) collect(ctx context.Context, script string, watch bool) ([]jobdir.Job, bool, error) {
	var (
		jobs     []jobdir.Job
		errs     []error
		timedOut bool
	)
	err := c.exec(ctx, script, nil, watch, reply{
		job:     func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil },
		refused: func(err error) error { errs = append(errs, err); return nil },
		wait:    func(state string) { timedOut = timedOut || state == "timeout" },
	})
	if err != nil {
		return nil, false, err
	}
	return jobs, timedOut, errors.Join(errs...)
}

// Status reports on the jobs named by refs (ids or names). It returns the
// jobs it found and an error for each it did not.
func (c *Client) Status(ctx context.Context, refs ...string) ([]jobdir.Job, error) {
	script, err := shellgen.StatusScript(c.target(), refs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, _, err := c.collect(ctx, script, false)
	return jobs, err
}
