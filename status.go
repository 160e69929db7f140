package bgjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/internal/shellgen"
	"github.com/bgjob/bgjob/jobdir"
)

// Status reports on the jobs named by refs (ids or names). It returns the
// jobs it found and an error for each it did not.
func (c *Client) Status(ctx context.Context, refs ...string) ([]jobdir.Job, error) {
	script, err := shellgen.StatusScript(c.target(), refs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return c.collect(ctx, script)
}

// collect runs a script that reports on jobs (status, stop) and returns
// the jobs and the errors it reported.
func (c *Client) collect(ctx context.Context, script string) ([]jobdir.Job, error) {
	var (
		jobs []jobdir.Job
		errs []error
	)
	err := c.exec(ctx, script, nil, false, shellgen.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil }),
		Refused: gather(&errs),
	})
	if err != nil {
		return nil, err
	}
	return jobs, errors.Join(errs...)
}
