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
	Ready    bool      `json:"ready" jsonschema:"with ready_output: true once a line of output matched it"`
	Line     string    `json:"line,omitempty" jsonschema:"the line that matched ready_output"`
	Port     *portView `json:"port,omitempty" jsonschema:"with ready_port: the port the job listens on"`
	TimedOut bool      `json:"timed_out" jsonschema:"with ready_output: true when ready_timeout_sec passed first; the job keeps running"`
}

// readyFields are readyOut's fields, which a result of job_start
// without ready_output leaves out.
var readyFields = []string{"ready", "timed_out"}

// readyWait is what job_start waits for with ready_output: the pattern,
// and for how long.
type readyWait struct {
	pattern string
	port    *int
	timeout time.Duration
}

// readySpec checks job_start's ready_output and ready_timeout_sec, before
// the job starts; pattern "" without ready_output. With ready_output,
// wait_sec (which the SDK fills in by default, so that it is always
// given) is not used.
func readySpec(in startIn) (readyWait, error) {
	switch {
	case in.ReadyOutput != "" && in.ReadyPort != nil:
		return readyWait{}, errors.New("use one of ready_output and ready_port")
	case in.ReadyPort != nil:
		if p := *in.ReadyPort; p < 0 || p > 65535 {
			return readyWait{}, fmt.Errorf("ready_port %d: want a TCP port from 1 to 65535, or 0 for any", p)
		}
	case in.ReadyOutput == "":
		if in.ReadyTimeoutSec != nil {
			return readyWait{}, errors.New("ready_timeout_sec goes with ready_output or ready_port")
		}
		return readyWait{}, nil
	default:
		if err := bgjob.CheckPattern(in.ReadyOutput); err != nil {
			return readyWait{}, fmt.Errorf("ready_output: %w", err)
		}
	}
	r := readyWait{pattern: in.ReadyOutput, port: in.ReadyPort, timeout: waitTimeout}
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
		if rw.port != nil {
			rd, err = c.ReadyPort(ctx, j.ID, *rw.port, bgjob.ReadyOptions{Timeout: rw.timeout})
		} else {
			rd, err = c.Ready(ctx, j.ID, rw.pattern, bgjob.ReadyOptions{Timeout: rw.timeout})
		}
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
	if rw.port != nil {
		out.Ports = portsOf(rd.Job)
		return portOutcome(j, rd, *rw.port, rw.timeout, out), r.text, nil
	}
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

// portOutcome is startReady's message with ready_port: the job listens
// on port (0: any), ended first, or the timeout came; it fills in out's
// port once ready; timeout is ready_timeout_sec.
func portOutcome(j jobdir.Job, rd bgjob.Readiness, port int, timeout time.Duration, out *startOut) string {
	what := "port " + fmt.Sprint(port)
	if port == 0 {
		what = "any port"
	}
	switch {
	case rd.Ready:
		p := portView(rd.Port)
		out.Port = &p
		return fmt.Sprintf("job %s is ready, pid %d: it listens on %s\njob_wait waits for it to end, job_output reads what is new", j.ID, j.PID, rd.Port)
	case rd.TimedOut:
		return fmt.Sprintf("job %s did not listen on %s within %s; it keeps running (job_stop stops it); its last lines:", j.ID, what, timeout)
	}
	return fmt.Sprintf("job %s %s before it listened on %s; its last lines:", j.ID, exitText(out.jobView), what)
}
