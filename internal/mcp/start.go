package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const startDoc = `Start a shell command as a detached background job, like "bgjob run".
Waits up to wait_sec (default 3): a command that ends in time returns its status, exit code and output;
otherwise the result has status "running", the pid, the log paths and the output so far. wait_sec 0 returns as soon as
the job runs, without output (job_output then reads it from the start). Use job_wait to wait for it
to end or to print a line (until_output), job_output for new output, job_stop to stop it.
With ready_output (e.g. "Listening on") it returns instead once a line of output matches, with ready_port once the job
listens on that TCP port: ready, or the job ended first (its status, exit code and last lines), or timed_out after
ready_timeout_sec (the job keeps running).
The job is stopped when this MCP session ends, unless keep is true.`

type startIn struct {
	Command         string            `json:"command" jsonschema:"shell command to run (sh -c semantics; bash where the host has it)"`
	Name            string            `json:"name,omitempty" jsonschema:"name for the job; later calls may use it instead of the id"`
	Cwd             string            `json:"cwd,omitempty" jsonschema:"working directory (default: where the server runs, or the login directory over SSH)"`
	Env             map[string]string `json:"env,omitempty" jsonschema:"environment variables to set (not BGJOB_JOB_ID or BGJOB_JOB_DIR, which bgjob sets)"`
	TimeoutSec      float64           `json:"timeout_sec,omitempty" jsonschema:"stop the job after this many seconds (default: never)"`
	WaitSec         *float64          `json:"wait_sec,omitempty" jsonschema:"wait up to this many seconds for the job to end (default 3, 0: return at once)"`
	Stdin           bool              `json:"stdin,omitempty" jsonschema:"give the job a standard input that job_send writes to"`
	LineBuffered    *bool             `json:"line_buffered,omitempty" jsonschema:"ask programs to write output line by line (default true)"`
	Keep            bool              `json:"keep,omitempty" jsonschema:"leave the job running when this MCP session ends"`
	Replace         bool              `json:"replace,omitempty" jsonschema:"with name: first stop the jobs of that name (e.g. a dev server to restart) and wait until their processes are gone, so that a port one held is free"`
	PTY             bool              `json:"pty,omitempty" jsonschema:"run the command on a pseudo-terminal (programs that check isatty, prompts, REPLs, progress bars); implies stdin: job_send writes keystrokes, \"\\u0003\" is Ctrl-C; output is the terminal stream (job_output strips its escapes)"`
	PTYSize         string            `json:"pty_size,omitempty" jsonschema:"with pty: the terminal's size, COLSxROWS (default 80x24)"`
	Host            string            `json:"host,omitempty" jsonschema:"host to run on (default: the server's host)"`
	Slots           int               `json:"slots,omitempty" jsonschema:"queue the job: it starts, in the order queued, once fewer than this many slotted jobs run on its host (1: one after another); until then it is queued"`
	After           []string          `json:"after,omitempty" jsonschema:"ids or names of jobs that must end (whatever their status) before this one starts"`
	AfterOK         []string          `json:"after_ok,omitempty" jsonschema:"ids or names of jobs that must exit 0 before this one starts; if one does not, this job ends not_run without running"`
	ReadyOutput     string            `json:"ready_output,omitempty" jsonschema:"return once a line of output matches this POSIX extended regular expression, as job_wait's until_output reads it (e.g. Listening on|ready): the result says ready, or that the job ended first (its status, exit code and last lines), or timed_out; wait_sec is then not used"`
	ReadyPort       *int              `json:"ready_port,omitempty" jsonschema:"return once one of the job's processes listens on this TCP port (0: on any port), as with ready_output: the result says ready (and the port), or that the job ended first, or timed_out"`
	ReadyTimeoutSec *float64          `json:"ready_timeout_sec,omitempty" jsonschema:"with ready_output or ready_port: give up after this many seconds (default 30, max 600), the job left running"`
	Labels          map[string]string `json:"labels,omitempty" jsonschema:"labels of the job, {\"KEY\": \"VALUE\"}, by which job_list and job_stop select jobs: KEY 1-64 letters, digits or ._@:+- starting with a letter or digit, VALUE up to 256 bytes of text; the server adds mcp.client, the name of this client"`
}

type startOut struct {
	jobView
	PID        int        `json:"pid" jsonschema:"process id of the job's wrapper (its process group)"`
	StdoutPath string     `json:"stdout_path" jsonschema:"path of stdout.log on the job's host"`
	StderrPath string     `json:"stderr_path" jsonschema:"path of stderr.log on the job's host"`
	Replaced   []string   `json:"replaced,omitempty" jsonschema:"ids of the jobs of the same name that replace stopped"`
	SameName   []string   `json:"same_name_running,omitempty" jsonschema:"id of a job of the same name still running beside this one (replace would have stopped it)"`
	Output     string     `json:"output" jsonschema:"output so far (both streams; read through this client's cursor, so job_output goes on after it)"`
	Truncated  bool       `json:"truncated" jsonschema:"output was cut to the cap; job_output reads the rest"`
	Ports      []portView `json:"ports,omitempty" jsonschema:"with ready_port: the TCP ports the job's processes listen on"`
	*readyOut
}

// jobView is what a result says about a job.
type jobView struct {
	ID       string            `json:"id" jsonschema:"job id"`
	Name     string            `json:"name,omitempty" jsonschema:"job name, when it has one"`
	Host     string            `json:"host,omitempty" jsonschema:"host of the job, as the call named it (absent: this machine)"`
	Status   jobdir.Status     `json:"status" jsonschema:"running, queued (waits for its turn: slots, after), exited, killed, lost, not_run (an after_ok job did not exit 0) or unreadable (its files cannot be read as a job's: detail says why)"`
	ExitCode *int              `json:"exit_code,omitempty" jsonschema:"exit code once the job has ended (128+N when killed by signal N); absent before"`
	Reason   string            `json:"reason,omitempty" jsonschema:"why it ended so, when bgjob knows: stop (job_stop), timeout (timeout_sec), session_end (the session that started it ended), reboot or vanished (lost), after_ok or ulimit (not_run), cpu_limit or fsize_limit (ended by a resource limit of bgjob run --ulimit)"`
	Detail   string            `json:"detail,omitempty" jsonschema:"what a queued job waits for (slot, or after ID), why a job was not run, or why its files cannot be read"`
	LogsFull bool              `json:"logs_full,omitempty" jsonschema:"true when the file system of the job's logs had no space left as its command ended: output may be missing from them"`
	Labels   map[string]string `json:"labels,omitempty" jsonschema:"the job's labels (job_start's labels, and mcp.client: the client that started it through bgjob mcp)"`
}

func viewOf(j jobdir.Job) jobView {
	v := jobView{ID: j.ID, Name: j.Name, Host: j.Host, Status: j.Status, ExitCode: j.ExitCode, Reason: j.Reason, LogsFull: j.LogsFull, Labels: j.Labels}
	switch j.Status {
	case jobdir.StatusQueued:
		v.Detail = j.Queued
	case jobdir.StatusNotRun, jobdir.StatusUnreadable:
		v.Detail = j.Error
	}
	return v
}

func (s *Server) start(ctx context.Context, req *sdk.CallToolRequest, in startIn) (*sdk.CallToolResult, startOut, error) {
	spec, wait, err := startSpec(in)
	if err != nil {
		return nil, startOut{}, err
	}
	rw, err := readySpec(in)
	if err != nil {
		return nil, startOut{}, err
	}
	var held startOut
	spec.NameHeld = func(old jobdir.Job, replaced bool) {
		if replaced {
			held.Replaced = append(held.Replaced, old.ID)
		} else {
			held.SameName = append(held.SameName, old.ID)
		}
	}
	spec.Labels = withClient(spec.Labels, req)
	owner := *s.opts.Owner
	owner.Keep = in.Keep || s.opts.KeepJobs
	spec.Owner = &owner
	// The id is chosen here, so that a job whose start was cancelled is
	// known: its launch may have gone on (a wrapper once started writes
	// its meta.json itself), and the job is stopped with the session's.
	spec.ID = jobdir.NewID(time.Now())
	j, host, err := s.launch(ctx, in.Host, spec, in.Keep)
	if err != nil {
		return nil, startOut{}, err
	}
	out := startOut{PID: j.PID, StdoutPath: j.StdoutPath, StderrPath: j.StderrPath, Replaced: held.Replaced, SameName: held.SameName}
	if rw.pattern != "" || rw.port != nil {
		msg, text, err := s.startReady(ctx, req, j, host, rw, &out)
		if err != nil {
			return nil, startOut{}, err
		}
		return result("%s%s\n%s", msg, heldText(in.Name, held), text), out, nil
	}
	if wait == 0 {
		// At once: no read (one script less); the cursor stays at the
		// start, so job_output returns everything.
		out.jobView = viewOf(j)
		out.Host = host
		return result("job %s started, pid %d; job_wait waits for it, job_output reads its output%s", j.ID, j.PID, heldText(in.Name, held)), out, nil
	}
	r, err := s.firstOutput(ctx, req, host, j.ID, wait)
	if err != nil {
		return nil, startOut{}, fmt.Errorf("job %s started; %w", j.ID, err)
	}
	out.jobView = viewOf(r.job)
	out.Host = host
	out.Output, out.Truncated = r.text, r.truncated
	msg := fmt.Sprintf("job %s %s", j.ID, exitText(viewOf(r.job)))
	if r.job.Status == jobdir.StatusRunning {
		msg += fmt.Sprintf(", pid %d; job_wait waits for it, job_output reads what is new", j.PID)
	}
	msg += heldText(in.Name, held)
	return result("%s\n%s", msg, r.text), out, nil
}

// startSpec checks job_start's arguments, and makes them the job's spec
// and how long to wait for the job's end.
func startSpec(in startIn) (spec bgjob.Spec, wait time.Duration, err error) {
	if in.Command == "" {
		return bgjob.Spec{}, 0, errors.New("command is empty")
	}
	timeout, err := seconds("timeout_sec", in.TimeoutSec, bgjob.MaxTimeout)
	if err != nil {
		return bgjob.Spec{}, 0, err
	}
	wait = 3 * time.Second
	if in.WaitSec != nil {
		if wait, err = seconds("wait_sec", *in.WaitSec, maxWait); err != nil {
			return bgjob.Spec{}, 0, err
		}
	}
	spec = bgjob.Spec{Argv: []string{in.Command}, Name: in.Name, Cwd: in.Cwd, Timeout: timeout,
		Stdin: in.Stdin, LineBuffered: in.LineBuffered == nil || *in.LineBuffered}
	spec.Replace = in.Replace
	if in.PTYSize != "" {
		if spec.PTYCols, spec.PTYRows, err = bgjob.ParsePTYSize(in.PTYSize); err != nil {
			return bgjob.Spec{}, 0, fmt.Errorf("pty_size: %w", err)
		}
	}
	spec.PTY = in.PTY
	if in.Slots < 0 {
		return bgjob.Spec{}, 0, errors.New("slots must be at least 1")
	}
	spec.Slots, spec.After, spec.AfterOK, spec.Labels = in.Slots, in.After, in.AfterOK, in.Labels
	for k, v := range in.Env {
		if k == "" || strings.Contains(k, "=") {
			// "A=B": "x" would set A to "B=x".
			return bgjob.Spec{}, 0, fmt.Errorf("env: invalid variable name %q: want letters, digits and _", k)
		}
		spec.Env = append(spec.Env, k+"="+v)
	}
	sort.Strings(spec.Env)
	if err := spec.Validate(); err != nil {
		return bgjob.Spec{}, 0, argError(err, startArgs)
	}
	return spec, wait, nil
}

// launch runs spec on host, and returns the job and the host's name. The
// job is owned before it is launched: a session that ends meanwhile waits
// for the launch, then stops the job (keep: leaves it running).
func (s *Server) launch(ctx context.Context, host string, spec bgjob.Spec, keep bool) (j jobdir.Job, name string, err error) {
	// Not repeated after a drop: the job may have started.
	err = s.do(ctx, host, false, s.limit(spec.ReplaceTime()), func(ctx context.Context, c *bgjob.Client, h string) error {
		name = h
		done, err := s.owned.launch(h, spec.ID, keep)
		if err != nil {
			return err
		}
		j, err = c.Run(ctx, spec)
		// Cut short (the call cancelled, the host given up on), the
		// launch may have gone on: the job stays owned.
		failed := err != nil && ctx.Err() == nil && !errors.Is(err, bgjob.ErrNoAnswer)
		done(failed)
		if !failed {
			s.digest.started(h, spec.ID)
		}
		return err
	})
	return j, name, err
}

// firstOutput waits up to wait for job id on host to end, and then reads
// its output through the client's cursor, so that job_output goes on
// after it.
func (s *Server) firstOutput(ctx context.Context, req *sdk.CallToolRequest, host, id string, wait time.Duration) (r readResult, err error) {
	err = s.do(ctx, host, true, s.limit(wait), func(ctx context.Context, c *bgjob.Client, h string) error {
		if _, err := c.Wait(ctx, []string{id}, bgjob.WaitOptions{Timeout: wait}); err != nil && !errors.Is(err, bgjob.ErrTimeout) {
			return err
		}
		var err error
		r, err = s.read(ctx, c, req, readSpec{id: id, cursor: true, host: h})
		return err
	})
	return r, err
}

// startArgs are the arguments of the Spec fields a bgjob.FieldError names.
var startArgs = map[string]string{"Slots": "slots", "Replace": "replace", "Name": "a name", "Timeout": "timeout_sec", "PTYCols": "pty_size", "PTY": "pty: true"}

// heldText says which jobs of the name the start replaced or left running.
func heldText(name string, h startOut) string {
	var s string
	if len(h.Replaced) > 0 {
		s += fmt.Sprintf("\nstopped first (replace): %s", strings.Join(h.Replaced, ", "))
	}
	if len(h.SameName) > 0 {
		s += fmt.Sprintf("\nwarning: job %s named %s is still running beside it; the name now means the new job (replace: true stops the old one first)", strings.Join(h.SameName, ", "), name)
	}
	return s
}

// ClientLabel is the label the server gives every job it starts: the
// name of the client it serves, from the client's initialize request
// (clientInfo.name).
const ClientLabel = "mcp.client"

// withClient returns labels with ClientLabel set to the name of the client
// of req's session, over a label of that key given; labels as they are
// when the client gave no name a label can hold.
func withClient(labels map[string]string, req *sdk.CallToolRequest) map[string]string {
	if req == nil || req.Session == nil {
		return labels
	}
	p := req.Session.InitializeParams()
	if p == nil || p.ClientInfo == nil || jobdir.ValidateLabel(ClientLabel, p.ClientInfo.Name) != nil {
		return labels
	}
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	l[ClientLabel] = p.ClientInfo.Name
	return l
}
