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

const listDoc = `List jobs, newest first, like "bgjob ls": id, name, status, exit code, reason, command, start and end times, host.
Filter by status (running, queued, exited, killed, lost, not_run or unreadable), by exact name, by labels, by search (id, name or command) or to the jobs this client started (mine);
limit (default 20, max 100) and cursor page through the rest. counts gives the number of jobs of each status
over the whole selection (every page), and mine the number of them this client started.`

type listIn struct {
	Status        string            `json:"status,omitempty" jsonschema:"only jobs with this status"`
	Name          string            `json:"name,omitempty" jsonschema:"only jobs with exactly this name"`
	Search        string            `json:"search,omitempty" jsonschema:"only jobs whose id, name or command contains this, ignoring case"`
	Mine          bool              `json:"mine,omitempty" jsonschema:"only the jobs this client started through this server"`
	Limit         int               `json:"limit,omitempty" jsonschema:"page size (default 20, max 100)"`
	Cursor        string            `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	AllWorkspaces bool              `json:"all_workspaces,omitempty" jsonschema:"list the jobs of every workspace"`
	Host          string            `json:"host,omitempty" jsonschema:"host of the jobs (default: the server's host)"`
	Labels        map[string]string `json:"labels,omitempty" jsonschema:"only jobs with every one of these labels, {\"KEY\": \"VALUE\"} (job_start's labels; mcp.client names the client that started a job)"`
}

type listJob struct {
	ID        string            `json:"id" jsonschema:"job id"`
	Name      string            `json:"name,omitempty" jsonschema:"job name, when it has one"`
	Status    jobdir.Status     `json:"status" jsonschema:"running, queued (waits for its turn: slots, after), exited, killed, lost, not_run (an after_ok job did not exit 0) or unreadable (its files cannot be read as a job's: error says why)"`
	ExitCode  *int              `json:"exit_code,omitempty" jsonschema:"exit code once ended (absent before)"`
	Reason    string            `json:"reason,omitempty" jsonschema:"why it ended so, when bgjob knows: stop (job_stop), timeout (timeout_sec), session_end (the session that started it ended), reboot or vanished (lost), after_ok or ulimit (not_run), cpu_limit or fsize_limit (ended by a resource limit of bgjob run --ulimit)"`
	Queued    string            `json:"queued,omitempty" jsonschema:"what a queued job waits for: slot, or after ID"`
	Error     string            `json:"error,omitempty" jsonschema:"why a job was not run (not_run), or why its files cannot be read (unreadable)"`
	Command   string            `json:"command" jsonschema:"the command (cut at 200 bytes)"`
	StartedAt *time.Time        `json:"started_at,omitempty" jsonschema:"when its command started (RFC 3339); absent while it is queued, or when it never ran"`
	EndedAt   *time.Time        `json:"ended_at,omitempty" jsonschema:"end time (absent while it runs)"`
	Host      string            `json:"host,omitempty" jsonschema:"host of the job, as the call named it (absent: this machine)"`
	Mine      bool              `json:"mine,omitempty" jsonschema:"started by this client through this server: stopped when its session ends, unless started with keep"`
	Keep      bool              `json:"keep,omitempty" jsonschema:"started with keep: outlives the session that started it"`
	Labels    map[string]string `json:"labels,omitempty" jsonschema:"the job's labels"`
	Ports     []portView        `json:"ports,omitempty" jsonschema:"the TCP ports the job's processes listen on"`
}

// portView is a TCP port a job's process listens on.
type portView struct {
	Port    int    `json:"port" jsonschema:"the port number"`
	Proto   string `json:"proto" jsonschema:"tcp"`
	Address string `json:"address" jsonschema:"the address it listens at: 0.0.0.0 or :: for all, 127.0.0.1, ::1"`
}

// portsOf is j's ports as results show them (nil for none).
func portsOf(j jobdir.Job) []portView {
	var ps []portView
	for _, p := range j.Ports {
		ps = append(ps, portView(p))
	}
	return ps
}

// portsText is j's ports as a result's text says them: " listening on
// 8000/tcp (0.0.0.0)", "" for none.
func portsText(j jobdir.Job) string {
	if len(j.Ports) == 0 {
		return ""
	}
	ps := make([]string, len(j.Ports))
	for i, p := range j.Ports {
		ps[i] = p.String()
	}
	return " listening on " + strings.Join(ps, ", ")
}

// listCounts are the jobs of a selection by status, and those of this
// client.
type listCounts struct {
	Running    int `json:"running" jsonschema:"jobs running"`
	Queued     int `json:"queued" jsonschema:"jobs queued"`
	Exited     int `json:"exited" jsonschema:"jobs exited"`
	Killed     int `json:"killed" jsonschema:"jobs killed"`
	Lost       int `json:"lost" jsonschema:"jobs lost"`
	NotRun     int `json:"not_run" jsonschema:"jobs not run"`
	Unreadable int `json:"unreadable" jsonschema:"jobs whose files cannot be read"`
	Mine       int `json:"mine" jsonschema:"how many of them this client started through this server"`
}

// add counts j.
func (c *listCounts) add(j jobdir.Job, mine bool) {
	n := map[jobdir.Status]*int{jobdir.StatusRunning: &c.Running, jobdir.StatusQueued: &c.Queued, jobdir.StatusExited: &c.Exited,
		jobdir.StatusKilled: &c.Killed, jobdir.StatusLost: &c.Lost, jobdir.StatusNotRun: &c.NotRun, jobdir.StatusUnreadable: &c.Unreadable}[j.Status]
	if n != nil {
		*n++
	}
	if mine {
		c.Mine++
	}
}

type listOut struct {
	Jobs       []listJob  `json:"jobs" jsonschema:"the page of jobs, newest first"`
	Counts     listCounts `json:"counts" jsonschema:"the jobs of the selection (every page) by status, and how many this client started (mine)"`
	NextCursor string     `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page (absent: no more)"`
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
	o := bgjob.ListOptions{Status: jobdir.Status(in.Status), Name: in.Name, Search: in.Search, Limit: in.Limit, Cursor: in.Cursor,
		AllWorkspaces: in.AllWorkspaces, Labels: in.Labels, Ports: true} // job_list shows the ports, found from the processes
	if in.Mine {
		o.Owner = s.opts.Owner
	}
	var (
		page   bgjob.Page
		counts listCounts
		host   string
	)
	err := s.do(ctx, in.Host, true, s.limit(0), func(ctx context.Context, c *bgjob.Client, h string) (err error) {
		host, page, counts = h, bgjob.Page{Jobs: []jobdir.Job{}}, listCounts{}
		o.Count = func(j jobdir.Job) { counts.add(j, s.mine(j)) }
		page.Next, err = c.ListFunc(ctx, o, func(j jobdir.Job) error {
			page.Jobs = append(page.Jobs, j)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, listOut{}, err
	}
	out := listOut{Jobs: []listJob{}, Counts: counts, NextCursor: page.Next}
	var sb strings.Builder
	sb.WriteString(counts.text(host))
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
			StartedAt: started, EndedAt: j.EndedAt, Host: host, Mine: s.mine(j), Keep: j.Owner != nil && j.Owner.Keep, Labels: j.Labels, Ports: portsOf(j)})
		name := j.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(&sb, "%s %s %s%s %s\n", j.ID, name, exitText(viewOf(j)), portsText(j), strings.ReplaceAll(cmd, "\n", " "))
	}
	if page.Next != "" {
		fmt.Fprintf(&sb, "more: call job_list with cursor %q\n", page.Next)
	}
	txt, _ := capText(sb.String(), s.opts.MaxOutput)
	return result("%s", txt), out, nil
}

// text is the first line of job_list's text: "5 jobs on this machine: 1
// running, 4 exited; 2 started by you".
func (c listCounts) text(host string) string {
	var parts []string
	total := 0
	for _, n := range []struct {
		status jobdir.Status
		n      int
	}{{jobdir.StatusRunning, c.Running}, {jobdir.StatusQueued, c.Queued}, {jobdir.StatusExited, c.Exited}, {jobdir.StatusKilled, c.Killed},
		{jobdir.StatusLost, c.Lost}, {jobdir.StatusNotRun, c.NotRun}, {jobdir.StatusUnreadable, c.Unreadable}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.status))
			total += n.n
		}
	}
	jobs := "jobs"
	if total == 1 {
		jobs = "job"
	}
	if total == 0 {
		return fmt.Sprintf("0 jobs on %s\n", hostName(host))
	}
	return fmt.Sprintf("%d %s on %s: %s; %d started by you\n", total, jobs, hostName(host), strings.Join(parts, ", "), c.Mine)
}

// mine reports whether j was started by this server: its owner is the
// server's own identity.
func (s *Server) mine(j jobdir.Job) bool {
	return j.Owner != nil && j.Owner.Same(*s.opts.Owner)
}
