package bgjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
	if out, ok := c.nativeStatus(refs); ok {
		if os.Getenv(NativeCheckEnv) != "" {
			if out, err = c.checkNative(ctx, script, out, func() (string, bool) { return c.nativeStatus(refs) }); err != nil {
				return nil, err
			}
		}
		return c.collectFrom(ctx, "", strings.NewReader(out))
	}
	return c.collect(ctx, script)
}

// NativeCheckEnv, set to anything in the environment, makes each status
// made in Go on this machine also run its script and compare what the two
// printed, byte for byte: it fails on a difference. The e2e tests run
// with it.
const NativeCheckEnv = "BGJOB_NATIVE_CHECK"

// checkNative runs script, whose output native (what a read made in Go
// printed) must equal, and returns the records to read, or an error naming
// the difference. A job can change between the two reads (a removal, the
// end of a job): a difference is looked at again, both ways (remake makes
// the native one again), once.
func (c *Client) checkNative(ctx context.Context, script, native string, remake func() (string, bool)) (string, error) {
	for try := 0; ; try++ {
		var sh bytes.Buffer
		if err := c.rt.Exec(ctx, script, nil, &sh); err != nil {
			return "", err
		}
		if sh.String() == native {
			return native, nil
		}
		if try == 1 {
			return "", fmt.Errorf("a read made in Go differs from its script's: %q, the script's %q", native, sh.String())
		}
		var ok bool
		if native, ok = remake(); !ok {
			return sh.String(), nil
		}
	}
}

// collect runs a script that reports on jobs (status, stop) and returns
// the jobs and the errors it reported.
func (c *Client) collect(ctx context.Context, script string) ([]jobdir.Job, error) {
	return c.collectFrom(ctx, script, nil)
}

// collectFrom is collect of the records in recs, when not nil, instead of
// a script's.
func (c *Client) collectFrom(ctx context.Context, script string, recs io.Reader) ([]jobdir.Job, error) {
	var (
		jobs []jobdir.Job
		errs []error
	)
	h := shellgen.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { jobs = append(jobs, j); return nil }),
		Refused: gather(&errs),
	}
	var err error
	if recs != nil {
		_, err = h.Decode(recs)
	} else {
		err = c.exec(ctx, script, nil, false, h)
	}
	if err != nil {
		return nil, err
	}
	return jobs, errors.Join(errs...)
}
