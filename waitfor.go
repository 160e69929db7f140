package bgjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
	"github.com/bgjob/bgjob/termtext"
)

// WaitForOptions tunes WaitFor.
type WaitForOptions struct {
	// Stdout reads only stdout.log and Stderr only stderr.log; neither
	// reads both.
	Stdout, Stderr bool
	// Timeout gives up after this long with ErrTimeout (0: never).
	Timeout time.Duration
	// Since, when not zero, is when the wait began, before its caller
	// connected: Timeout counts from it, and the error names Timeout.
	Since time.Time
	// Rewound, when not nil, is called with the stream ("stdout" or
	// "stderr") whose log the wait found truncated, shorter than what it
	// had read (logrotate's copytruncate): it reads it again from its
	// start, as tail -F does.
	Rewound func(stream string)
}

// Match is the line WaitFor found: its place in the log, and its bytes
// (the newline included). Of a line longer than 64 KiB, 64 KiB, marked
// Truncated: those that end 1 KiB after the match where the host's grep
// tells where the match is (GNU grep's -b; not on a PTY job), else the
// line's first.
type Match struct {
	LogRange
	Line []byte
}

// WaitFor blocks until a line of the job's output matches pattern, a POSIX
// extended regular expression (grep -E on the host, matched byte by byte
// in the C locale; lines already written count), and returns the job and
// the line. While the job runs only whole lines are matched. When the job
// ends first the error wraps ErrNoMatch (the job tells how it ended); at
// the timeout it wraps ErrTimeout; a pattern the host's grep cannot
// compile, or that grep -E reads otherwise than RE2 would (\d, (?i),
// [\s]: checkERE), wraps ErrUsage. Over SSH the host polls inside one script; on a
// runtime that is a Watcher the same script looks once each time a job
// file changes (and once a second), going on from where it stopped. The
// timeout holds on the client's clock too, as for Wait: a grep that takes
// its time on a long line is ended with the script that runs it. On a
// Watcher, whose looks are this machine's, a look the timeout falls in
// (a log that floods, a slow grep) is the look at the timeout: it is ended
// then, and the wait times out; one that starts at the timeout, which may
// find a line written just before it, has up to a second more. The job
// does not count its processes (ProcessScan jobdir.ScanNone).
func (c *Client) WaitFor(ctx context.Context, ref, pattern string, o WaitForOptions) (job jobdir.Job, m Match, err error) {
	left := timeLeft(o.Timeout, o.Since)
	timedOut := fmt.Errorf("waiting %s for %q: %w", waitLabel(o.Timeout), pattern, ErrTimeout)
	w, watch := c.rt.(Watcher)
	var end func(error) error
	if watch && left > 0 {
		// No host to wait for: what ends the wait is the timeout.
		ctx, end = bound(ctx, time.Now().Add(left+answerGrace), timedOut, false)
	} else {
		ctx, end = waitBound(ctx, o.Timeout, o.Since)
	}
	defer func() {
		if err = end(err); err != nil {
			m = Match{}
		}
	}()
	if err := CheckPattern(pattern); err != nil {
		return jobdir.Job{}, Match{}, err
	}
	q := shellgen.WaitFor{Ref: ref, Pattern: pattern, Timeout: left}
	switch {
	case o.Stdout && !o.Stderr:
		q.Streams = []string{"stdout"}
	case o.Stderr && !o.Stdout:
		q.Streams = []string{"stderr"}
	}
	// Every rewind is told, also one Go finds first (mayMatch); a match
	// in a log read again from its start says so (LogRange.Rewound).
	rewound := map[string]bool{}
	tell := func(stream string) {
		rewound[stream] = true
		if o.Rewound != nil {
			o.Rewound(stream)
		}
	}
	defer func() {
		if rewound[m.Stream] {
			m.Rewound = true
		}
	}()
	if !watch {
		return c.waitFor(ctx, &q, o.Timeout, tell)
	}
	return c.waitForHere(ctx, w, q, o.Timeout, left, timedOut, tell)
}

// waitForHere is WaitFor on this machine (a Watcher's): the script looks
// once (q.Once) each time a job file changes, and once a second, going on
// from where it stopped, after Go's reading of the pattern (mayMatch)
// found a possible match; left is what is left of timeout, timedOut the
// error of a wait that reached it.
func (c *Client) waitForHere(ctx context.Context, w Watcher, q shellgen.WaitFor, timeout, left time.Duration, timedOut error, tell func(string)) (jobdir.Job, Match, error) {
	q.Once, q.Timeout = true, 0
	// A look runs until the timeout; one that starts there, the last,
	// has what is left of ctx.
	deadline := time.Now().Add(left)
	look := func(ctx context.Context) (jobdir.Job, Match, error) {
		if left <= 0 || !time.Now().Before(deadline) {
			return c.waitFor(ctx, &q, timeout, tell)
		}
		lctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		j, m, err := c.waitFor(lctx, &q, timeout, tell)
		if err != nil && lctx.Err() != nil && ctx.Err() == nil {
			return j, Match{}, timedOut
		}
		return j, m, err
	}
	j, m, err := look(ctx)
	if !errors.Is(err, errPending) {
		return j, m, err
	}
	q.Ref = j.ID
	// What a look finds is first matched here, on the new lines, by Go's
	// reading of the pattern (mayMatch): only a possible match, or a job
	// that has ended, runs the script, which matches, reports the match
	// and tells when the job has ended.
	re, reErr := regexp.Compile("(?m)" + q.Pattern)
	scripted := time.Now()
	atTimeout, err := watched(ctx, w, []string{j.Dir}, left, logChange, func(ctx context.Context) error {
		// The script looks at least every scriptEvery: a line that Go
		// reads otherwise than grep is found then.
		quick := reErr == nil && (left <= 0 || time.Now().Before(deadline)) && time.Since(scripted) < scriptEvery
		if quick && !c.mayMatch(ctx, j.Meta.PTY, &q, re, tell) {
			return errPending
		}
		scripted = time.Now()
		looked, lm, err := look(ctx)
		if looked.ID != "" {
			j, m = looked, lm
		}
		return err
	})
	if atTimeout && errors.Is(err, errPending) {
		return j, Match{}, timedOut
	}
	return j, m, err
}

// waitFor runs one WaitForScript. Looking once without a match, it moves
// q's offsets to where the script stopped and returns errPending; at the
// timeout the error names timeout, the wait's whole.
func (c *Client) waitFor(ctx context.Context, q *shellgen.WaitFor, timeout time.Duration, rewound func(string)) (jobdir.Job, Match, error) {
	script, err := shellgen.WaitForScript(c.target(), *q)
	if err != nil {
		return jobdir.Job{}, Match{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		job   jobdir.Job
		m     Match
		found bool
		errs  []error
		state string
	)
	scanned, marks := map[string]int64{}, map[string][]byte{}
	err = c.exec(ctx, script, nil, !q.Once, records.Handler{
		Job:     c.jobs(func(j jobdir.Job, _ string) error { job = j; return nil }),
		Refused: c.gather(&errs),
		Wait:    func(s string) { state = s },
		Scanned: func(stream string, off int64, mark []byte) { scanned[stream], marks[stream] = off, mark },
		Rewound: func(stream string, _ int64) {
			if rewound != nil {
				rewound(stream)
			}
		},
		Cut: func(string) { m.Truncated = true },
		Data: func(stream string, off int64, r io.Reader) error {
			var b bytes.Buffer
			if _, err := io.Copy(&b, r); err != nil {
				return err
			}
			if !found {
				m = Match{LogRange: LogRange{Stream: stream, Offset: off}}
				found = true
			}
			m.Line = append(m.Line, b.Bytes()...)
			m.Next = off + int64(b.Len())
			return nil
		},
	})
	switch {
	case err != nil:
		return job, Match{}, err
	case len(errs) > 0:
		return job, Match{}, errors.Join(errs...)
	case found:
		return job, m, nil
	case state == "timeout":
		return job, Match{}, fmt.Errorf("waiting %s for %q: %w", waitLabel(timeout), q.Pattern, ErrTimeout)
	case state == "ended":
		return job, Match{}, fmt.Errorf("job %s: %w %q", job.ID, ErrNoMatch, q.Pattern)
	case state == "pending":
		q.Offsets, q.Marks = scanned, marks
		return job, Match{}, errPending
	}
	return job, Match{}, errors.New("waiting for a line: the script reported nothing")
}

// maxPrefilter is the most new bytes of the logs mayMatch reads; past it
// the script looks.
const maxPrefilter = 1 << 20

// mayMatch reports whether the job q names may have ended, or a line
// appended to its logs since q's offsets may match re, q's pattern as Go
// reads it: the whole lines (on a PTY job the line being written too, and
// their text, without escape sequences and CRs, as the script's bg_screen
// sees it; a string longer than termtext.MaxString shows more text here,
// never less) after what the --max-log-size cap dropped. It reads them as
// a follow does (Logs from q's offsets, with their marks), which the
// runtime answers itself on this machine. It only decides when the
// wait_for script looks, the script alone matches: where the two read a
// pattern otherwise (grep -E matches bytes in the C locale, Go runes: "."
// and é), a line that Go misses is found by the script's next look,
// within scriptEvery. An error, or much to read, is a maybe. A log
// truncated since q's offset (without its mark there) is read from its
// start: q's offset of it goes back to 0, and rewound is told, as the
// script's t record would tell it.
func (c *Client) mayMatch(ctx context.Context, pty bool, q *shellgen.WaitFor, re *regexp.Regexp, rewound func(string)) bool {
	streams := q.Streams
	if len(streams) == 0 {
		streams = []string{"stdout", "stderr"}
	}
	lq := shellgen.Logs{Ref: q.Ref, Streams: streams, HasOffset: true, Offsets: map[string]int64{}, Marks: q.Marks, MaxBytes: maxPrefilter}
	for _, st := range streams {
		lq.Offsets[st] = q.Offsets[st]
	}
	var (
		res      LogResult
		out, err bytes.Buffer
	)
	tell := func(stream string) {
		q.Offsets[stream] = 0
		delete(q.Marks, stream)
		rewound(stream)
	}
	if c.readLogs(ctx, lq, nil, tell, &res, &out, &err) != nil || !res.Job.Status.Active() {
		return true
	}
	for _, r := range res.Ranges {
		if r.Truncated {
			return true
		}
	}
	for _, b := range [][]byte{out.Bytes(), err.Bytes()} {
		if pty {
			b = bytes.ReplaceAll(termtext.Strip(b), []byte("\r"), nil)
		} else {
			b = b[:bytes.LastIndexByte(b, '\n')+1]
		}
		if re.Match(b) {
			return true
		}
	}
	return false
}
