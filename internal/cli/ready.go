package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

// defaultReadyTimeout is run --ready-timeout's default: long enough for a
// dev server's first build, short enough that a server that never says
// it listens does not hold an agent's turn.
const defaultReadyTimeout = 60 * time.Second

// readyTail is how many of the last lines of each log run --ready shows
// when the job ended, or did not become ready, in time.
const readyTail = 20

// readied is what run --ready found: the readiness (or err), and the
// last lines of the job's output when it did not become ready (or why
// they could not be read, tailErr).
type readied struct {
	bgjob.Readiness
	err     error
	tail    []byte
	tailErr error
}

// ready waits for a line of job j's output that matches o.ready, for up
// to o.readyTimeout; when none came, it reads the last lines of the logs.
func (a *app) ready(ctx context.Context, c *bgjob.Client, j jobdir.Job, o runOptions) readied {
	var (
		r   bgjob.Readiness
		err error
	)
	if o.readyPort != "" {
		// Checked by readyFlags.
		port, _ := parsePort(o.readyPort, "--ready-port")
		r, err = c.ReadyPort(ctx, j.ID, port, bgjob.ReadyOptions{Timeout: o.readyTimeout})
	} else {
		r, err = c.Ready(ctx, j.ID, o.ready, bgjob.ReadyOptions{Timeout: o.readyTimeout, Rewound: a.rewound(j.ID)})
	}
	if r.Job.ID == "" {
		// The wait saw no job (the host did not answer): the job is
		// the one run started.
		r.Job = j
	}
	if err != nil || r.Ready {
		return readied{Readiness: r, err: err}
	}
	var out, errb bytes.Buffer
	lctx, end := bgjob.Within(ctx, a.host, a.limit(0))
	_, err = c.Logs(lctx, j.ID, bgjob.LogOptions{All: true, Tail: readyTail}, &out, &errb)
	// Each log's lines end with a newline, so that the other's start a
	// line.
	tail := append(endLine(out.Bytes()), endLine(errb.Bytes())...)
	return readied{Readiness: r, tail: tail, tailErr: end(err)}
}

// readyJSON is what run --ready adds to the job in --json.
type readyJSON struct {
	Ready    bool         `json:"ready"`
	Line     string       `json:"line,omitempty"`
	Port     *jobdir.Port `json:"ready_port,omitempty"`
	TimedOut bool         `json:"timed_out"`
}

// json is r as run --json adds it to the job.
func (r readied) json() *readyJSON {
	rj := &readyJSON{Ready: r.Ready, Line: strings.TrimSuffix(string(r.Match.Line), "\n"), TimedOut: r.TimedOut}
	if r.Port.Port != 0 {
		rj.Port = &r.Port
	}
	return rj
}

// news is what run --ready says on stderr once ready: the line that
// matched, or with --ready-port the port found.
func (r readied) news() []byte {
	if r.Port.Port != 0 {
		return []byte(r.Port.String() + "\n")
	}
	return endLine(r.Match.Line)
}

// missed is what run --ready says of a job that did not become ready:
// at the timeout, or that ended first (how: end).
func (o runOptions) missed(id string, timedOut bool, end string) string {
	switch {
	case timedOut && o.readyPort != "":
		return fmt.Sprintf("job %s did not listen on port %s within %s", id, o.readyPort, o.readyTimeout)
	case timedOut:
		return fmt.Sprintf("job %s printed no line matching %q within %s", id, o.ready, o.readyTimeout)
	case o.readyPort != "":
		return fmt.Sprintf("job %s ended before it listened on port %s: %s", id, o.readyPort, end)
	}
	return fmt.Sprintf("job %s ended before a line matched %q: %s", id, o.ready, end)
}

// readyExit prints on stderr what run --ready found, after the job was
// printed, and returns run's exit status: 0 once ready (the matched line
// said), the job's status (1 for 0) when it ended first, exitRunning at
// the timeout (the job left running); with the last lines of its output
// in both latter cases. With --json the job's document, printed, says
// what became of it: the error is said on stderr only.
func (a *app) readyExit(r readied, o runOptions) error {
	err := a.readyOutcome(r, o)
	if err != nil && a.json {
		var ee *exitError
		if errors.As(err, &ee) {
			return &exitError{code: ee.code, err: &shownError{err: ee.err}}
		}
		return &shownError{err: err}
	}
	return err
}

// readyOutcome is readyExit, its error as the text says it.
func (a *app) readyOutcome(r readied, o runOptions) error {
	if r.err != nil {
		if r.Ready {
			// Ready, but not recorded: the line is still the news.
			a.stderr.Write(r.news())
		}
		return a.alone(r.err)
	}
	if r.Ready {
		_, err := a.stderr.Write(r.news())
		return err
	}
	a.stderr.Write(r.tail)
	if r.tailErr != nil {
		fmt.Fprintf(a.stderr, "bgjob: warning: reading the job's last lines: %v\n", r.tailErr)
	}
	j := r.Job
	if r.TimedOut {
		return &exitError{code: exitRunning, err: fmt.Errorf("%s; it goes on in the background (bgjob stop %s stops it)", o.missed(j.ID, true, ""), j.ID)}
	}
	return &exitError{code: noMatchCode(j), err: errors.New(o.missed(j.ID, false, jobtext.End(j)))}
}

// readyFlags checks how run's --ready and --ready-timeout go with the
// other flags.
func readyFlags(f *pflag.FlagSet, o runOptions) error {
	switch {
	case f.Changed("ready-timeout") && !f.Changed("ready") && !f.Changed("ready-port"):
		return usageError("--ready-timeout goes with --ready or --ready-port")
	case f.Changed("ready") && f.Changed("ready-port"):
		return usageError("use one of --ready and --ready-port")
	case o.readyPort != "" && o.wait > 0:
		return usageError("use one of --ready-port and --wait")
	case f.Changed("ready") && o.ready == "":
		return usageError("--ready needs a pattern")
	case o.ready != "" && o.wait > 0:
		return usageError("use one of --ready and --wait")
	case o.readyTimeout < 0:
		return usageError("--ready-timeout must not be negative")
	}
	if o.readyPort != "" {
		_, err := parsePort(o.readyPort, "--ready-port")
		return err
	}
	if o.ready == "" {
		return nil
	}
	// Refused before the job starts, where bgjob can tell; what only
	// the host's grep refuses is refused once the job runs.
	if err := bgjob.CheckPattern(o.ready); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--ready: %w", err)}
	}
	return nil
}
