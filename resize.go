package bgjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Resize gives the terminal of a job started with PTY cols columns by
// rows rows, as a terminal emulator does when its window changes: the
// job's foreground processes get SIGWINCH and read the new size. The
// size is recorded in the job directory (the file terminal). A job
// without a PTY fails with an *Error of KindNoPTY, one that has ended with
// KindEnded. The job does not count its processes (ProcessScan
// jobdir.ScanNone).
func (c *Client) Resize(ctx context.Context, ref string, cols, rows int) (jobdir.Job, error) {
	if cols < 1 || rows < 1 || cols > MaxPTYSide || rows > MaxPTYSide {
		return jobdir.Job{}, fmt.Errorf("%w: terminal size %dx%d: each side must be 1 to %d", ErrUsage, cols, rows, MaxPTYSide)
	}
	script, err := shellgen.ResizeScript(c.target(), shellgen.Resize{Ref: ref, Cols: cols, Rows: rows})
	if err != nil {
		return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		job  jobdir.Job
		errs []error
	)
	err = c.exec(ctx, script, nil, false, records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { job = j; return nil }),
		Refused: c.gather(&errs),
	})
	if err != nil {
		return job, err
	}
	return job, errors.Join(errs...)
}
