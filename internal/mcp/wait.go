package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const waitDoc = `Block until jobs end (all of them, or the first with any; without ids, the first of the jobs you started that are still running), until a line matching until_output appears in a job's output, or until timeout_sec (default 30,
max 600). Returns each job's status and exit code, the last 20 lines of each ended job, matched with the matching line,
and timed_out when it gave up; the jobs keep running. Use this instead of polling job_output in a loop.`

type waitIn struct {
	IDs         []string `json:"ids,omitempty" jsonschema:"job ids or names (omitted: any job you started through this server that is still running, the first to end)"`
	Any         bool     `json:"any,omitempty" jsonschema:"return when the first job ends"`
	TimeoutSec  *float64 `json:"timeout_sec,omitempty" jsonschema:"give up after this many seconds (default 30, max 600)"`
	UntilOutput string   `json:"until_output,omitempty" jsonschema:"return as soon as a line of output matches this POSIX extended regular expression, as the host's grep -E reads it (e.g. Listening on|ready; [0-9], not \\d: a pattern that grep -E reads otherwise than RE2 would is refused; on a pty job it matches the text of the terminal's lines, escape sequences and CRs removed, so ^42 finds a line the screen shows as 42; empty or omitted: wait for the jobs to end)"`
	Host        string   `json:"host,omitempty" jsonschema:"host of the jobs (default: the server's host)"`
}

// maxMatched caps the matching line that job_wait returns.
const maxMatched = 1 << 10

type waitJob struct {
	jobView
	Tail string `json:"tail,omitempty" jsonschema:"last 20 lines of output of an ended job"`
}

type waitOut struct {
	Jobs      []waitJob `json:"jobs" jsonschema:"each job as it is when the wait returns"`
	Matched   string    `json:"matched,omitempty" jsonschema:"the line that matched until_output"`
	MatchedID string    `json:"matched_id,omitempty" jsonschema:"id of the job that printed it"`
	TimedOut  bool      `json:"timed_out" jsonschema:"the wait gave up at timeout_sec; the jobs keep running"`
	Rewound   []string  `json:"rewound,omitempty" jsonschema:"logs found truncated while until_output read them (as logrotate's copytruncate leaves them), read again from their start: \"ID stdout\""`
}

func (s *Server) wait(ctx context.Context, req *sdk.CallToolRequest, in waitIn) (*sdk.CallToolResult, waitOut, error) {
	timeout := waitTimeout
	if in.TimeoutSec != nil {
		var err error
		if timeout, err = seconds("timeout_sec", *in.TimeoutSec, maxWait); err != nil {
			return nil, waitOut{}, err
		}
		if timeout == 0 {
			return nil, waitOut{}, errors.New("timeout_sec must be positive")
		}
	}
	stop := s.progress(ctx, req, timeout)
	var out waitOut
	// After a drop the wait starts again, on a new connection.
	err := s.doWaiting(ctx, in.Host, true, timeout+lookGrace, timeout, func(ctx context.Context, c *bgjob.Client, host string) error {
		var (
			jobs []jobdir.Job
			err  error
		)
		out = waitOut{}
		ids, any := in.IDs, in.Any
		if len(ids) == 0 {
			// Any job this client started there that it has not been
			// told ended.
			ids, any = s.digest.unended(host), true
			if len(ids) > 0 {
				// Those removed since are forgotten, not waited for.
				found, err := c.Status(ctx, ids...)
				if bgjob.IgnoreNotFound(err) != nil {
					return err
				}
				s.digest.forget(host, missing(ids, found))
				ids = nil
				for _, j := range found {
					ids = append(ids, j.ID)
				}
			}
			if len(ids) == 0 {
				return errors.New("ids is empty and no job you started on this host is running: name the jobs to wait for")
			}
		}
		if in.UntilOutput != "" {
			jobs, out, err = s.waitFor(ctx, c, ids, in.UntilOutput, timeout)
		} else {
			jobs, err = c.Wait(ctx, ids, bgjob.WaitOptions{Any: any, Timeout: timeout})
			switch {
			case errors.Is(err, bgjob.ErrTimeout) && len(jobs) > 0:
				out.TimedOut, err = true, nil
			case errors.Is(err, bgjob.ErrTimeout):
				// No jobs: the host never answered, neither the wait nor
				// the look at the jobs after it.
				return fmt.Errorf("%s did not answer: %w", hostName(host), err)
			}
		}
		if err != nil {
			return err
		}
		// The result tells how they stand: the digest tells them no more.
		s.digest.shown(host, jobs)
		out.Jobs = []waitJob{}
		for _, j := range jobs {
			wj := waitJob{jobView: viewOf(j)}
			wj.Host = host
			if j.Status.Ended() {
				r, err := s.read(ctx, c, req, readSpec{id: j.ID, tail: 20, max: s.opts.MaxOutput / len(jobs)})
				if err != nil {
					return err
				}
				wj.Tail = r.text
			}
			out.Jobs = append(out.Jobs, wj)
		}
		return nil
	})
	stop()
	if err != nil {
		return nil, waitOut{}, err
	}
	return result("%s", waitText(out, timeout)), out, nil
}

// waitText says what out says, for a client that passes the model only the
// text: every job's status and its whole tail, the match or the timeout.
func waitText(out waitOut, timeout time.Duration) string {
	var lines []string
	switch {
	case out.Matched != "":
		lines = append(lines, fmt.Sprintf("matched in job %s: %s", out.MatchedID, out.Matched))
	case out.TimedOut:
		lines = append(lines, fmt.Sprintf("timed out after %s; the jobs keep running", timeout))
	}
	for _, r := range out.Rewound {
		id, stream, _ := strings.Cut(r, " ")
		lines = append(lines, rewoundText(id, stream))
	}
	for _, wj := range out.Jobs {
		lines = append(lines, fmt.Sprintf("job %s %s", wj.ID, exitText(wj.jobView)))
		if wj.Tail != "" {
			lines = append(lines, strings.TrimSuffix(wj.Tail, "\n"))
		}
	}
	return strings.Join(lines, "\n")
}

// rewoundText says that the log of stream of job id was found truncated
// and read again from its start (job_wait's and job_output's text).
func rewoundText(id, stream string) string {
	return fmt.Sprintf("job %s: %s.log was truncated; it was read again from its start", id, stream)
}

// waitFor waits until a line of one of the jobs matches pattern, each job
// watched by Client.WaitFor at once; it returns the jobs as their watches
// last saw them, and looks again (within lookGrace) only at those whose
// watch the deadline cut before the host answered.
func (s *Server) waitFor(ctx context.Context, c *bgjob.Client, ids []string, pattern string, timeout time.Duration) ([]jobdir.Job, waitOut, error) {
	var out waitOut
	// Each job's watch is a script of its own: over SSH those past the
	// connection's sessions start late, so the deadline ends them, a
	// second after the watches that started at once time out on the host.
	wctx, cancel := context.WithTimeout(ctx, timeout+watchSlack)
	defer cancel()
	type answer struct {
		i     int
		job   jobdir.Job
		match bgjob.Match
		err   error
	}
	answers := make(chan answer, len(ids))
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		// rewound holds the logs read again, in the order they were
		// found: the job's index in ids (it is named by its id once its
		// watch has answered) and the stream.
		rewound []struct {
			i      int
			stream string
		}
	)
	for i, id := range ids {
		wg.Go(func() {
			j, m, err := c.WaitFor(wctx, id, pattern, bgjob.WaitForOptions{Timeout: timeout, Rewound: func(stream string) {
				mu.Lock()
				defer mu.Unlock()
				rewound = append(rewound, struct {
					i      int
					stream string
				}{i, stream})
			}})
			answers <- answer{i, j, m, err}
		})
	}
	jobs := make([]jobdir.Job, len(ids))
	var errs []error
	for range ids {
		a := <-answers
		jobs[a.i] = a.job
		switch {
		case a.err == nil:
			if out.Matched == "" {
				out.Matched, out.MatchedID = matchedLine(a.match), a.job.ID
				cancel()
			}
		case errors.Is(a.err, bgjob.ErrTimeout), errors.Is(a.err, context.DeadlineExceeded) && ctx.Err() == nil:
			out.TimedOut = true
		case errors.Is(a.err, bgjob.ErrNoMatch), errors.Is(a.err, context.Canceled) && ctx.Err() == nil:
		default:
			// A pattern refused is refused for each job: say it once.
			if !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == a.err.Error() }) {
				errs = append(errs, a.err)
			}
		}
	}
	wg.Wait()
	for _, r := range rewound {
		id := jobs[r.i].ID
		if id == "" {
			id = ids[r.i]
		}
		out.Rewound = append(out.Rewound, id+" "+r.stream)
	}
	if out.Matched != "" {
		out.TimedOut = false
	}
	if err := errors.Join(errs...); err != nil {
		return nil, waitOut{}, err
	}
	jobs, err := lookAgain(ctx, c, ids, jobs)
	if err != nil {
		return nil, waitOut{}, err
	}
	return jobs, out, nil
}

// matchedLine is the line a wait matched, as job_wait shows it: text,
// cut to maxMatched.
func matchedLine(m bgjob.Match) string {
	line, cut := capText(strings.TrimSuffix(clean(m.Line, false), "\n"), maxMatched)
	if cut {
		line += "…"
	}
	return line
}

// lookAgain fills in the jobs of ids whose watch the wait's deadline cut
// before the host answered (jobs without an id), with one look at them
// within lookGrace.
func lookAgain(ctx context.Context, c *bgjob.Client, ids []string, jobs []jobdir.Job) ([]jobdir.Job, error) {
	var unseen []string
	for i, j := range jobs {
		if j.ID == "" {
			unseen = append(unseen, ids[i])
		}
	}
	if len(unseen) == 0 {
		return jobs, nil
	}
	lctx, lcancel := context.WithTimeout(ctx, lookGrace)
	defer lcancel()
	looked, err := c.Status(lctx, unseen...)
	if err != nil {
		if lctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("the wait ended, and the host did not answer a look at %d of the jobs within %s", len(unseen), lookGrace)
		}
		return nil, err
	}
	for i := range jobs {
		if jobs[i].ID == "" && len(looked) > 0 {
			jobs[i], looked = looked[0], looked[1:]
		}
	}
	return jobs, nil
}

// progress sends progress notifications while a wait blocks, when the
// client asked for them; stop ends them.
func (s *Server) progress(ctx context.Context, req *sdk.CallToolRequest, total time.Duration) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.opts.ProgressEvery)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				el := time.Since(start)
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: token, Progress: el.Seconds(), Total: total.Seconds(),
					Message: fmt.Sprintf("waiting, %s of %s", el.Round(time.Second), total),
				})
			}
		}
	}()
	return func() { cancel(); <-done }
}
