package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// readyTail is how many of the last lines of each log job_start returns
// when ready_output did not match: the job ended first, or the timeout
// came.
const readyTail = 20

// readyOut is what job_start with ready_output adds to its result: which
// of the three outcomes came (ready, timed_out, or neither: the job
// ended first, and status and exit_code say how).
type readyOut struct {
	Ready    bool   `json:"ready" jsonschema:"with ready_output: true once a line of output matched it"`
	Line     string `json:"line,omitempty" jsonschema:"the line that matched ready_output"`
	TimedOut bool   `json:"timed_out" jsonschema:"with ready_output: true when ready_timeout_sec passed first; the job keeps running"`
}

// readyFields are readyOut's fields, which a result of job_start
// without ready_output leaves out.
var readyFields = []string{"ready", "timed_out"}

// readyWait is what job_start waits for with ready_output: the pattern,
// and for how long.
type readyWait struct {
	pattern string
	timeout time.Duration
}

// readySpec checks job_start's ready_output and ready_timeout_sec, before
// the job starts; pattern "" without ready_output. With ready_output,
// wait_sec (which the SDK fills in by default, so that it is always
// given) is not used.
func readySpec(in startIn) (readyWait, error) {
	if in.ReadyOutput == "" {
		if in.ReadyTimeoutSec != nil {
			return readyWait{}, errors.New("ready_timeout_sec goes with ready_output")
		}
		return readyWait{}, nil
	}
	if err := bgjob.CheckPattern(in.ReadyOutput); err != nil {
		return readyWait{}, fmt.Errorf("ready_output: %w", err)
	}
	r := readyWait{pattern: in.ReadyOutput, timeout: waitTimeout}
	if in.ReadyTimeoutSec != nil {
		var err error
		if r.timeout, err = seconds("ready_timeout_sec", *in.ReadyTimeoutSec, maxWait); err != nil {
			return readyWait{}, err
		}
		if r.timeout == 0 {
			return readyWait{}, errors.New("ready_timeout_sec must be positive")
		}
	}
	return r, nil
}

// startReady waits until a line of job j's output on host matches
// rw.pattern, or the job ends, or rw.timeout passes, and fills in out:
// the outcome, the job as it then is, and its output read through the
// client's cursor (once ready, all of it so far; else its last lines).
// It returns the result's text: what happened, and the output.
func (s *Server) startReady(ctx context.Context, req *sdk.CallToolRequest, j jobdir.Job, host string, rw readyWait, out *startOut) (msg, text string, err error) {
	stop := s.progress(ctx, req, rw.timeout)
	defer stop()
	var (
		rd bgjob.Readiness
		r  readResult
	)
	err = s.doWaiting(ctx, host, true, s.limit(rw.timeout), rw.timeout, func(ctx context.Context, c *bgjob.Client, h string) error {
		var err error
		rd, err = c.Ready(ctx, j.ID, rw.pattern, bgjob.ReadyOptions{Timeout: rw.timeout})
		if err != nil {
			return err
		}
		spec := readSpec{id: j.ID, cursor: true, host: h}
		if !rd.Ready {
			spec.tail = readyTail
		}
		r, err = s.read(ctx, c, req, spec)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("job %s started; %w", j.ID, err)
	}
	out.jobView = viewOf(r.job)
	out.Host = host
	out.Output, out.Truncated = r.text, r.truncated
	out.readyOut = &readyOut{Ready: rd.Ready, TimedOut: rd.TimedOut}
	switch {
	case rd.Ready:
		out.Line = matchedLine(rd.Match)
		msg = fmt.Sprintf("job %s is ready, pid %d: a line matched %q: %s\njob_wait waits for it to end, job_output reads what is new", j.ID, j.PID, rw.pattern, out.Line)
	case rd.TimedOut:
		msg = fmt.Sprintf("job %s printed no line matching %q within %s; it keeps running (job_stop stops it); its last lines:", j.ID, rw.pattern, rw.timeout)
	default:
		msg = fmt.Sprintf("job %s %s before a line matched %q; its last lines:", j.ID, exitText(out.jobView), rw.pattern)
	}
	return msg, r.text, nil
}

// startSchema is job_start's output schema: startOut's, the fields of
// readyOut not required (a start without ready_output has none).
func startSchema() *jsonschema.Schema {
	sc := output[startOut]()
	sc.Required = slices.DeleteFunc(sc.Required, func(name string) bool { return slices.Contains(readyFields, name) })
	return sc
}
