package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const startDoc = `Start a shell command as a detached background job, like "bgjob run".
Waits up to wait_sec (default 3; 0: return at once): a command that ends in time returns its status, exit code and output;
otherwise the result has status "running", the pid, the log paths and the output so far. Use job_wait to wait for it
to end or to print a line (until_output), job_output for new output, job_stop to stop it.
The job is stopped when this MCP session ends, unless keep is true.`

type startIn struct {
	Command      string            `json:"command" jsonschema:"shell command to run (sh -c semantics; bash where the host has it)"`
	Name         string            `json:"name,omitempty" jsonschema:"name for the job; later calls may use it instead of the id"`
	Cwd          string            `json:"cwd,omitempty" jsonschema:"working directory (default: where the server runs, or the login directory over SSH)"`
	Env          map[string]string `json:"env,omitempty" jsonschema:"environment variables to set"`
	TimeoutSec   float64           `json:"timeout_sec,omitempty" jsonschema:"stop the job after this many seconds (default: never)"`
	WaitSec      *float64          `json:"wait_sec,omitempty" jsonschema:"wait up to this many seconds for the job to end (default 3, 0: return at once)"`
	Stdin        bool              `json:"stdin,omitempty" jsonschema:"give the job a standard input that job_send writes to"`
	LineBuffered *bool             `json:"line_buffered,omitempty" jsonschema:"ask programs to write output line by line (default true)"`
	Keep         bool              `json:"keep,omitempty" jsonschema:"leave the job running when this MCP session ends"`
	Host         string            `json:"host,omitempty" jsonschema:"SSH host to run on (default: the server's host)"`
}

type startOut struct {
	jobView
	PID        int    `json:"pid"`
	StdoutPath string `json:"stdout_path"`
	StderrPath string `json:"stderr_path"`
	Output     string `json:"output"`
	Truncated  bool   `json:"truncated"`
}

// jobView is what a result says about a job.
type jobView struct {
	ID       string        `json:"id"`
	Name     string        `json:"name,omitempty"`
	Host     string        `json:"host,omitempty"`
	Status   jobdir.Status `json:"status"`
	ExitCode *int          `json:"exit_code"`
	Reason   string        `json:"reason,omitempty"`
}

func viewOf(j jobdir.Job) jobView {
	return jobView{ID: j.ID, Name: j.Name, Host: j.Host, Status: j.Status, ExitCode: j.ExitCode, Reason: j.Reason}
}

func (s *Server) start(ctx context.Context, req *sdk.CallToolRequest, in startIn) (*sdk.CallToolResult, startOut, error) {
	if in.Command == "" {
		return nil, startOut{}, errors.New("command is empty")
	}
	timeout, err := seconds("timeout_sec", in.TimeoutSec, 0)
	if err != nil {
		return nil, startOut{}, err
	}
	wait := 3 * time.Second
	if in.WaitSec != nil {
		if wait, err = seconds("wait_sec", *in.WaitSec, 10*time.Minute); err != nil {
			return nil, startOut{}, err
		}
	}
	spec := bgjob.Spec{Argv: []string{in.Command}, Name: in.Name, Cwd: in.Cwd, Timeout: timeout,
		Stdin: in.Stdin, LineBuffered: in.LineBuffered == nil || *in.LineBuffered}
	owner := *s.opts.Owner
	owner.Keep = in.Keep || s.opts.KeepJobs
	spec.Owner = &owner
	for k, v := range in.Env {
		spec.Env = append(spec.Env, k+"="+v)
	}
	sort.Strings(spec.Env)
	var (
		j    jobdir.Job
		host string
	)
	// Not repeated after a drop: the job may have started.
	err = s.do(ctx, in.Host, false, func(c *bgjob.Client, h string) (err error) {
		host = h
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		j, err = c.Run(sctx, spec)
		return err
	})
	if err != nil {
		return nil, startOut{}, err
	}
	if !in.Keep {
		s.owned.add(host, j.ID)
	}
	var r readResult
	err = s.do(ctx, host, true, func(c *bgjob.Client, _ string) error {
		if wait > 0 {
			if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: wait}); err != nil && !errors.Is(err, bgjob.ErrTimeout) {
				return err
			}
		}
		var err error
		r, err = s.read(ctx, c, req, readSpec{id: j.ID, cursor: true})
		return err
	})
	if err != nil {
		return nil, startOut{}, fmt.Errorf("job %s started; %w", j.ID, err)
	}
	out := startOut{jobView: viewOf(r.job), PID: j.PID, StdoutPath: j.StdoutPath, StderrPath: j.StderrPath,
		Output: r.text, Truncated: r.truncated}
	out.Host = host
	msg := fmt.Sprintf("job %s %s", j.ID, exitText(viewOf(r.job)))
	if r.job.Status == jobdir.StatusRunning {
		msg += fmt.Sprintf(", pid %d; job_wait waits for it, job_output reads what is new", j.PID)
	}
	return result("%s\n%s", msg, r.text), out, nil
}
