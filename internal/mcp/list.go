package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const listDoc = `List jobs, newest first, like "bgjob ls": id, name, status, exit code, reason, command, start and end times.
Filter by status (running, queued, exited, killed, lost, not_run or unreadable) or search (id, name or command);
limit (default 20, max 100) and cursor page through the rest.`

type listIn struct {
	Status        string `json:"status,omitempty" jsonschema:"only jobs with this status: running, queued, exited, killed, lost, not_run or unreadable"`
	Search        string `json:"search,omitempty" jsonschema:"only jobs whose id, name or command contains this, ignoring case"`
	Limit         int    `json:"limit,omitempty" jsonschema:"page size (default 20, max 100)"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	AllWorkspaces bool   `json:"all_workspaces,omitempty" jsonschema:"list the jobs of every workspace"`
	Host          string `json:"host,omitempty" jsonschema:"SSH host (default: the server's host)"`
}

type listJob struct {
	ID        string        `json:"id" jsonschema:"job id"`
	Name      string        `json:"name,omitempty" jsonschema:"job name, when it has one"`
	Status    jobdir.Status `json:"status" jsonschema:"running, queued (waits for its turn: slots, after), exited, killed, lost, not_run (an after_ok job did not exit 0) or unreadable (its files cannot be read as a job's: error says why)"`
	ExitCode  *int          `json:"exit_code" jsonschema:"exit code once ended, else null"`
	Reason    string        `json:"reason,omitempty" jsonschema:"why it ended so, when bgjob knows: stop (job_stop), timeout (timeout_sec), session_end (the session that started it ended), reboot or vanished (lost), after_ok (not_run)"`
	Queued    string        `json:"queued,omitempty" jsonschema:"what a queued job waits for: slot, or after ID"`
	Error     string        `json:"error,omitempty" jsonschema:"why a job was not run (not_run), or why its files cannot be read (unreadable)"`
	Command   string        `json:"command" jsonschema:"the command (cut at 200 bytes)"`
	StartedAt *time.Time    `json:"started_at" jsonschema:"when its command started (RFC 3339); null while it is queued, or when it never ran"`
	EndedAt   *time.Time    `json:"ended_at" jsonschema:"end time, null while running"`
	Host      string        `json:"host,omitempty" jsonschema:"SSH host (absent: this machine)"`
	Mine      bool          `json:"mine,omitempty" jsonschema:"started by this session: stopped when it ends, unless started with keep"`
	Keep      bool          `json:"keep,omitempty" jsonschema:"started with keep: outlives the session that started it"`
}

type listOut struct {
	Jobs       []listJob `json:"jobs" jsonschema:"the page of jobs, newest first"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page (absent: no more)"`
}

// maxCommand caps each command in a listing.
const maxCommand = 200

func (s *Server) list(ctx context.Context, _ *sdk.CallToolRequest, in listIn) (*sdk.CallToolResult, listOut, error) {
	if in.Status != "" {
		if _, err := jobdir.ParseStatus(in.Status); err != nil {
			return nil, listOut{}, err
		}
	}
	if in.Limit < 0 || in.Limit > 100 {
		return nil, listOut{}, fmt.Errorf("limit %d: want 1 to 100", in.Limit)
	}
	if in.Limit == 0 {
		in.Limit = 20
	}
	var (
		page bgjob.Page
		host string
	)
	err := s.do(ctx, in.Host, true, s.limit(0), func(ctx context.Context, c *bgjob.Client, h string) (err error) {
		host = h
		page, err = c.List(ctx, bgjob.ListOptions{Status: jobdir.Status(in.Status), Search: in.Search, Limit: in.Limit, Cursor: in.Cursor,
			AllWorkspaces: in.AllWorkspaces, SkipRunningCount: true}) // job_list shows no count
		return err
	})
	if err != nil {
		return nil, listOut{}, err
	}
	out := listOut{Jobs: []listJob{}, NextCursor: page.Next}
	var sb strings.Builder
	for _, j := range page.Jobs {
		cmd, cut := capText(j.Command, maxCommand)
		if cut {
			cmd += "…"
		}
		var started *time.Time
		if !j.StartedAt.IsZero() {
			started = &j.StartedAt
		}
		out.Jobs = append(out.Jobs, listJob{ID: j.ID, Name: j.Name, Status: j.Status, ExitCode: j.ExitCode,
			Reason: j.Reason, Queued: j.Queued, Error: j.Error, Command: cmd,
			StartedAt: started, EndedAt: j.EndedAt, Host: host, Mine: s.mine(j), Keep: j.Owner != nil && j.Owner.Keep})
		name := j.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(&sb, "%s %s %s %s\n", j.ID, name, exitText(viewOf(j)), strings.ReplaceAll(cmd, "\n", " "))
	}
	if len(page.Jobs) == 0 {
		sb.WriteString("no jobs\n")
	}
	if page.Next != "" {
		fmt.Fprintf(&sb, "more: call job_list with cursor %q\n", page.Next)
	}
	txt, _ := capText(sb.String(), s.opts.MaxOutput)
	return result("%s", txt), out, nil
}

// mine reports whether j was started by this server: its owner is the
// server's own identity.
func (s *Server) mine(j jobdir.Job) bool {
	o := j.Owner
	if o == nil {
		return false
	}
	self := *s.opts.Owner
	return o.Kind == self.Kind && o.PID == self.PID && o.ProcStart == self.ProcStart &&
		o.BootID == self.BootID && o.Hostname == self.Hostname && o.MachineID == self.MachineID
}
