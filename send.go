package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// SendOptions tunes Send.
type SendOptions struct {
	// EOF closes the job's stdin instead of writing, so that it reads end
	// of file.
	EOF bool
	// Timeout gives up, with an error wrapping ErrTimeout, when the job
	// has not taken the data after this long (0: wait while it runs).
	Timeout time.Duration
}

// Send writes data to the standard input of a job started with Stdin (or
// closes it, see SendOptions) and returns the job once it has taken the
// data. It fails with ErrEnded when the job ends before it has read it
// all; on the host nothing is left behind. At the timeout the error is a
// *DeliveryError where the host tells how much of the data reached the
// job's stdin (which the job still reads). The job does not count its
// processes (ProcessScan jobdir.ScanNone).
func (c *Client) Send(ctx context.Context, ref string, data io.Reader, o SendOptions) (jobdir.Job, error) {
	eof := o.EOF
	script, err := shellgen.SendScript(c.target(), shellgen.Send{Ref: ref, EOF: eof, Timeout: o.Timeout})
	if err != nil {
		return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if data == nil || eof {
		data = strings.NewReader("")
	}
	var (
		job  jobdir.Job
		errs []error
	)
	total := dataSize(data)
	sent := int64(-1)
	err = c.exec(ctx, script, data, false, records.Handler{
		Job:       c.jobs(func(j jobdir.Job, _ string) error { job = j; return nil }),
		Refused:   c.gather(&errs),
		Delivered: func(n int64) { sent = n },
	})
	if err != nil {
		return job, err
	}
	if err := errors.Join(errs...); err != nil && sent >= 0 {
		return job, &DeliveryError{Delivered: sent, Total: total, Err: err}
	}
	return job, errors.Join(errs...)
}

// DeliveryError is the error of a Send that failed after Delivered bytes
// of its data had reached the job's stdin, of Total (-1: unknown). It
// wraps the failure (ErrTimeout).
type DeliveryError struct {
	Delivered, Total int64
	Err              error
}

func (e *DeliveryError) Error() string {
	if e.Total >= 0 {
		return fmt.Sprintf("%v (%d of %d bytes delivered)", e.Err, e.Delivered, e.Total)
	}
	return fmt.Sprintf("%v (%d bytes delivered)", e.Err, e.Delivered)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// dataSize returns how many bytes data holds, -1 when it cannot tell: an
// in-memory reader, or the rest of a regular file.
func dataSize(data io.Reader) int64 {
	switch d := data.(type) {
	case interface{ Len() int }:
		return int64(d.Len())
	case *os.File:
		fi, err := d.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := d.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return fi.Size() - off
	}
	return -1
}
