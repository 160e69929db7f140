package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Status reports on the jobs named by refs (ids or names). It returns the
// jobs it found and an error for each it did not.
func (c *Client) Status(ctx context.Context, refs ...string) ([]jobdir.Job, error) {
	script, err := shellgen.StatusLook(c.target(), refs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return c.collectLook(ctx, script.Text, nativeString(func() (string, bool) { return c.nativeStatus(refs) }))
}

// collect runs a script that reports on jobs (status, stop) and returns
// the jobs and the errors it reported.
func (c *Client) collect(ctx context.Context, script string) ([]jobdir.Job, error) {
	return c.collectLook(ctx, func() string { return script }, func() (io.Reader, func(), bool) { return nil, nil, false })
}

// collectLook is collect of the records nat makes in Go, where it can
// (look), script made only if it runs.
func (c *Client) collectLook(ctx context.Context, script func() string, nat native) ([]jobdir.Job, error) {
	var (
		jobs []jobdir.Job
		errs []error
	)
	err := c.look(ctx, script, false, nat, records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil }),
		Refused: c.gather(&errs),
	})
	if err != nil {
		return nil, err
	}
	return jobs, errors.Join(errs...)
}
