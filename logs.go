package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// LogOptions selects what Logs prints.
type LogOptions struct {
	// Stdout reads only stdout.log and Stderr only stderr.log; neither
	// (or All) reads both.
	Stdout, Stderr, All bool
	// At most one of these picks the range (none: the whole log): the last
	// Tail lines, the first Head lines, the last Bytes bytes, the bytes
	// from Offset (when FromOffset), or, with a Cursor, the bytes that its
	// reader has not read yet (see Cursor). Cursor with Tail returns the
	// last Tail lines of the unread output and moves the cursor to the
	// end. Offset and Cursor stop before an incomplete UTF-8 character
	// while the job runs, and on a PTY job before an escape sequence cut
	// off or carriage returns a newline may follow (the last 4 KiB are
	// looked at), so that termtext never sees the tail of a sequence. Zero
	// (the constant) as Tail, Head or Bytes asks for nothing: an empty
	// range, at the end of the log (with a Cursor, the cursor moves there)
	// or, for Head, at its start.
	Tail, Head int
	Bytes      int64
	Offset     int64
	FromOffset bool
	// Cursor, when not nil, picks what its reader has not read yet and
	// moves the reader's cursor over what reaches the reader (see Cursor);
	// nil reads without a cursor.
	Cursor *Cursor
	// Follow keeps printing what is appended until the job ends. A log
	// found shorter than it was (truncated, as logrotate's copytruncate
	// leaves it) is printed again from its start, as tail -F does, and
	// Rewound is told.
	Follow bool
	// Rewound, when not nil, is called with the stream ("stdout" or
	// "stderr") whose log a read found truncated, shorter than where it
	// had got to (a follow's, or a Cursor's): the read goes on from the
	// log's start. The range of that stream is marked Rewound.
	Rewound func(stream string)
	// Interactive, with Follow, is for a reader who types into the job
	// and wants the echo at once (attach). On a host reached by a script
	// a follow looks as soon as a log grows, where the host has GNU tail
	// (which watches the logs with inotify), and every second besides,
	// else every tenth of a second; an interactive one at most 20 ms
	// after a write, another within 200 ms, at most five looks a second.
	// A follow on this machine wakes on a write either way.
	Interactive bool
	// MaxBytes, when positive, returns at most this many bytes of log
	// data, all streams together (0: no cap). A range
	// that would be longer is cut and marked Truncated: Tail and Bytes
	// keep its end, the others its start (before an incomplete UTF-8
	// character or terminal escape sequence, as termtext sees them; a cap
	// smaller than the character or sequence the range starts with takes
	// it whole), so reading on from Next skips nothing, and a Cursor moves
	// only over what was returned. With Follow only the first read is
	// capped.
	MaxBytes int64
}

// Zero, as LogOptions.Tail, Head or Bytes, asks for no line or byte at
// all (0 there means the option is not used).
const Zero = -1

// Validate checks the rules about how o's fields go together: at most
// one range (Tail, Head, Bytes, FromOffset, Cursor; Cursor with Tail is
// one), no negative count, offset or cap (Zero aside), and neither Cursor
// nor Head with Follow. Its error wraps ErrUsage;
// a *FieldError, which a front end words with its own names for the
// fields. Logs calls it.
func (o LogOptions) Validate() error {
	bad := func(field, other, format string) error {
		return &Error{Kind: KindUsage, Err: fmt.Errorf("%w: %w", ErrUsage, &FieldError{Field: field, Other: other, format: format})}
	}
	for _, f := range []struct {
		name string
		n    int64
	}{{"Tail", int64(o.Tail)}, {"Head", int64(o.Head)}, {"Bytes", o.Bytes}} {
		if f.n < 0 && f.n != Zero {
			return bad(f.name, "", "%[1]s must not be negative")
		}
	}
	if o.Offset < 0 {
		return bad("Offset", "", "%[1]s must not be negative")
	}
	if o.MaxBytes < 0 {
		return bad("MaxBytes", "", "%[1]s must not be negative")
	}
	var picked []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"Tail", o.Tail != 0 && o.Cursor == nil}, {"Head", o.Head != 0}, {"Bytes", o.Bytes != 0}, {"Offset", o.FromOffset}, {"Cursor", o.Cursor != nil}} {
		if f.set {
			picked = append(picked, f.name)
		}
	}
	switch {
	case len(picked) > 1:
		return bad(picked[0], picked[1], "%[1]s does not go with %[2]s: one picks the range")
	case o.Cursor != nil && o.Follow:
		return bad("Cursor", "Follow", "%[1]s reads what is there now; it does not go with %[2]s")
	case o.Head != 0 && o.Follow:
		return bad("Head", "Follow", "%[1]s reads the start of the log; it does not go with %[2]s")
	}
	return nil
}

// LogRange says which bytes of one log a read returned: [Offset, Next).
// Truncated says the read was cut to LogOptions.MaxBytes: the log holds
// more of what was asked for, after Next (before Offset for Tail and
// Bytes).
// Rewound says the log was found truncated, shorter than where the read
// had got to (a follow's, a cursor's): it was read again from its start,
// from Offset.
type LogRange struct {
	Stream    string `json:"stream"`
	Offset    int64  `json:"offset"`
	Next      int64  `json:"next_offset"`
	Truncated bool   `json:"truncated,omitempty"`
	Rewound   bool   `json:"rewound,omitempty"`
	// mark is the mark of the log where the bytes read reach (marks.go):
	// a read on from Next checks it.
	mark logMark
}

// LogResult is what Logs read: the job as it was at the end of the read and
// the range of each log.
type LogResult struct {
	Job    jobdir.Job
	Ranges []LogRange
}

// Logs copies a job's logs, byte for byte: stdout.log to stdout and
// stderr.log to stderr. With Follow on a runtime that is a Watcher, file
// events are only the trigger: each one runs the same read again, from
// where the last one ended. A read does not look at the host's processes:
// the Job it returns has ProcessScan jobdir.ScanNone (its LiveProcesses
// are not counted), except after a Follow, which counts them once the job
// has ended.
func (c *Client) Logs(ctx context.Context, ref string, o LogOptions, stdout, stderr io.Writer) (LogResult, error) {
	if err := o.Validate(); err != nil {
		return LogResult{}, err
	}
	streams := []string{"stdout", "stderr"}
	switch {
	case o.All || o.Stdout == o.Stderr:
	case o.Stdout:
		streams = []string{"stdout"}
	case o.Stderr:
		streams = []string{"stderr"}
	}
	q := shellgen.Logs{
		Ref: ref, Streams: streams, Tail: o.Tail, Head: o.Head, Bytes: o.Bytes,
		HasOffset: o.FromOffset, Follow: o.Follow, Interactive: o.Interactive, MaxBytes: o.MaxBytes,
	}
	var commit *LogResult
	if o.Cursor != nil {
		q.New, q.Reader = true, o.Cursor.Reader
		commit = o.Cursor.commit(&q)
	}
	if o.FromOffset {
		q.Offsets = map[string]int64{"stdout": o.Offset, "stderr": o.Offset}
	}
	w, watch := c.rt.(Watcher)
	watch = watch && o.Follow
	if watch {
		q.Follow = false
	}
	var res LogResult
	err := c.readLogs(ctx, q, o.Cursor, o.Rewound, &res, stdout, stderr)
	if err == nil && commit != nil {
		o.Cursor.committed(commit, res.Job.ID)
	}
	if err != nil || !watch {
		return res, err
	}
	q = shellgen.Logs{Ref: res.Job.ID, Streams: streams, HasOffset: true}
	ended := func() bool { return !res.Job.Status.Active() }
	if ended() {
		return c.counted(ctx, res), nil
	}
	// Each look reads from where the last one ended, to the logs' ends,
	// and sees the job as it is: on this machine the runtime answers that
	// read itself (Answerer), without a script. A look that copied a flood
	// is made again soon, without the watch (errFlood).
	counted := &countWriter{w: stdout}
	countedErr := &countWriter{w: stderr}
	_, err = watched(ctx, w, []string{res.Job.Dir}, 0, logChange, func(ctx context.Context) error {
		q.Offsets, q.Marks = map[string]int64{}, map[string][]byte{}
		for _, r := range res.Ranges {
			q.Offsets[r.Stream] = r.Next
			q.Marks[r.Stream] = r.mark.at(r.Next)
		}
		before := counted.n.Load() + countedErr.n.Load()
		if err := c.readLogs(ctx, q, nil, o.Rewound, &res, counted, countedErr); err != nil {
			return err
		}
		switch {
		case ended():
			return nil
		case counted.n.Load()+countedErr.n.Load()-before >= floodBytes:
			return errFlood
		}
		return errPending
	})
	if err != nil {
		return res, err
	}
	return c.counted(ctx, res), nil
}

// logChange is the watch's filter of a follow or a wait --for on this
// machine: a job file is written as NAME.tmp, then renamed, and the
// rename is the change; exit_code is written in place, and its write is.
func logChange(name string) bool { return !strings.HasSuffix(name, ".tmp") }

// rewind starts the range of stream again at the log's start: the log was
// found truncated (LogRange.Rewound).
func (r *LogResult) rewind(stream string) {
	i := slices.IndexFunc(r.Ranges, func(g LogRange) bool { return g.Stream == stream })
	if i < 0 {
		i = len(r.Ranges)
		r.Ranges = append(r.Ranges, LogRange{Stream: stream})
	}
	r.Ranges[i] = LogRange{Stream: stream, Rewound: true}
}

// grow adds the bytes [offset, next) of the log of stream to r: the end of
// its range moves to next; a stream without one gets one from offset, and
// so does one just rewound (the read from the log's start begins at what
// the --max-log-size cap left, not at 0).
func (r *LogResult) grow(stream string, offset, next int64) {
	i := slices.IndexFunc(r.Ranges, func(g LogRange) bool { return g.Stream == stream })
	if i < 0 {
		i = len(r.Ranges)
		r.Ranges = append(r.Ranges, LogRange{Stream: stream, Offset: offset})
	}
	if g := &r.Ranges[i]; g.Rewound && g.Offset == 0 && g.Next == 0 {
		g.Offset = offset
	}
	r.Ranges[i].Next = next
}

// saw adds the bytes p of the log of stream, read at offset, to the mark
// of r's range of it (see grow).
func (r *LogResult) saw(stream string, offset int64, p []byte) {
	if i := slices.IndexFunc(r.Ranges, func(g LogRange) bool { return g.Stream == stream }); i >= 0 {
		r.Ranges[i].mark.add(offset, p)
	}
}

// counted is res with its job as a look at it finds it, its processes
// counted: a read does not count them; a follow's end does, as the follow
// script over SSH does. Without an answer res stays as it is.
func (c *Client) counted(ctx context.Context, res LogResult) LogResult {
	if res.Job.ProcessScan != jobdir.ScanNone {
		return res
	}
	if jobs, err := c.Status(ctx, res.Job.ID); err == nil && len(jobs) == 1 && jobs[0].ID == res.Job.ID {
		res.Job = jobs[0]
	}
	return res
}

// readLogs runs one LogsScript and adds what it read to res: the job as
// the script last saw it and the ranges of the logs it copied. With a
// cursor (q.New) it reports what was delivered as it goes (commits),
// unless the cursor holds its reads (Cursor.Hold), or with its Deliver
// once Deliver has taken the whole read.
func (c *Client) readLogs(ctx context.Context, q shellgen.Logs, cur *Cursor, rewound func(string), res *LogResult, stdout, stderr io.Writer) error {
	req, err := shellgen.LogsRequest(c.target(), q)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var cm *commits
	if cur != nil {
		deliver := cur.Deliver
		cm = newCommits(cur.Hold || deliver != nil)
		cm.unread, cm.quit = cur.Unread, ctx.Done()
		if deliver != nil {
			cm.deliver = func() error {
				if err := deliver(*res); err != nil {
					return err
				}
				cm.release()
				return nil
			}
		}
	}
	var errs []error
	h := records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { res.Job = j; return nil }),
		Refused: c.gather(&errs),
		Rewound: func(stream string, _ int64) {
			res.rewind(stream)
			if rewound != nil {
				rewound(stream)
			}
		},
		Cut: func(stream string) {
			for i := range res.Ranges {
				if res.Ranges[i].Stream == stream {
					res.Ranges[i].Truncated = true
				}
			}
		},
		Data: func(stream string, offset int64, r io.Reader) error {
			w := stdout
			if stream == "stderr" {
				w = stderr
			}
			if cm != nil {
				w = &deliveryWriter{w: w, c: cm, stream: stream, end: offset}
				// Also an empty range moves the cursor (to where it is).
				cm.delivered(stream, offset, nil)
			}
			var mark logMark
			if i := slices.IndexFunc(res.Ranges, func(g LogRange) bool { return g.Stream == stream }); i >= 0 {
				mark = res.Ranges[i].mark
			}
			n, err := io.Copy(&markWriter{w: w, m: &mark, at: offset}, r)
			res.grow(stream, offset, offset+n)
			i := slices.IndexFunc(res.Ranges, func(g LogRange) bool { return g.Stream == stream })
			res.Ranges[i].mark = mark
			return err
		},
	}
	if cm == nil {
		// A read with no cursor: the runtime's answer where it gives one.
		err = c.look(ctx, req, q.Follow, h)
	} else {
		err = c.execCommits(ctx, c.request(req), nil, q.Follow, h, cm, false)
	}
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
