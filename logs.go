package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// LogOptions selects what Logs prints.
type LogOptions struct {
	// Stderr reads stderr.log instead of stdout.log; All reads both.
	Stderr, All bool
	// At most one of these picks the range (none: the whole log): the last
	// Tail lines, the first Head lines, the last Bytes bytes, the bytes
	// from Offset (when FromOffset), or, with New, the bytes that Reader
	// ("" for "default") has not read yet. A reader's cursor is kept in
	// the job directory, so successive calls from any process or machine
	// each get only unread output. Offset and New stop before an
	// incomplete UTF-8 character while the job runs.
	Tail, Head int
	Bytes      int64
	Offset     int64
	FromOffset bool
	New        bool
	Reader     string
	// Follow keeps printing what is appended until the job ends.
	Follow bool
}

// LogRange says which bytes of one log a read returned: [Offset, Next).
type LogRange struct {
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Next   int64  `json:"next_offset"`
}

// LogResult is what Logs read: the job as it was at the end of the read and
// the range of each log.
type LogResult struct {
	Job    jobdir.Job
	Ranges []LogRange
}

// Logs copies a job's logs, byte for byte: stdout.log to stdout and
// stderr.log to stderr.
func (c *Client) Logs(ctx context.Context, ref string, o LogOptions, stdout, stderr io.Writer) (LogResult, error) {
	streams := []string{"stdout"}
	switch {
	case o.All:
		streams = []string{"stdout", "stderr"}
	case o.Stderr:
		streams = []string{"stderr"}
	}
	script, err := shellgen.LogsScript(c.target(), shellgen.Logs{
		Ref: ref, Streams: streams, Tail: o.Tail, Head: o.Head, Bytes: o.Bytes,
		Offset: o.Offset, HasOffset: o.FromOffset, New: o.New, Reader: o.Reader, Follow: o.Follow,
	})
	if err != nil {
		return LogResult{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if w, ok := c.rt.(Watcher); ok && o.Follow {
		return c.watchLogs(ctx, w, ref, o, stdout, stderr)
	}
	var (
		res  LogResult
		errs []error
	)
	ranges := map[string]int{}
	err = c.exec(ctx, script, o.Follow, func(ev shellgen.Event) error {
		switch {
		case ev.Job != nil:
			res.Job = c.derive(ev.Job)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		case ev.Data != nil:
			w := stdout
			if ev.Stream == "stderr" {
				w = stderr
			}
			n, err := io.Copy(w, ev.Data)
			if err != nil {
				return err
			}
			i, ok := ranges[ev.Stream]
			if !ok {
				i = len(res.Ranges)
				ranges[ev.Stream] = i
				res.Ranges = append(res.Ranges, LogRange{Stream: ev.Stream, Offset: ev.Offset})
			}
			res.Ranges[i].Next = ev.Offset + n
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, errors.Join(errs...)
}

// watchLogs follows a job's logs on this machine: it prints what the logs
// hold, then reads what is appended whenever fsnotify reports a write, and
// once exit_code appears (or, checked every second, the wrapper is gone)
// drains the last bytes and returns.
func (c *Client) watchLogs(ctx context.Context, w Watcher, ref string, o LogOptions, stdout, stderr io.Writer) (LogResult, error) {
	first := o
	first.Follow = false
	res, err := c.Logs(ctx, ref, first, stdout, stderr)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := w.Watch(ctx, []string{res.Job.Dir})
	if err != nil {
		return res, err
	}
	drain := func() error {
		for i := range res.Ranges {
			r := &res.Ranges[i]
			path, out := res.Job.StdoutPath, stdout
			if r.Stream == "stderr" {
				path, out = res.Job.StderrPath, stderr
			}
			n, err := copyFrom(out, path, r.Next)
			r.Next += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !res.Job.Status.Ended() && res.Job.Status != jobdir.StatusUnreadable {
		// Drain, then look at the status, then drain again below: what the
		// job wrote before it ended is printed before Logs returns.
		if err := drain(); err != nil {
			return res, err
		}
		look := false
		select {
		case name := <-events:
			look = name == jobdir.ExitCodeFile
		case <-tick.C:
			look = true
		case <-ctx.Done():
			return res, ctx.Err()
		}
		if look {
			jobs, err := c.Status(ctx, res.Job.ID)
			if err != nil {
				return res, err
			}
			res.Job = jobs[0]
		}
	}
	return res, drain()
}

// copyFrom copies the file at path from offset to its current end.
func copyFrom(w io.Writer, path string, offset int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading log: %w", err)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("copying log: %w", err)
	}
	return n, nil
}
