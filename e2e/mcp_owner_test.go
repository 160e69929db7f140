package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/jobdir"
)

// mcpProc is a bgjob mcp process, the built binary spoken to over stdio.
type mcpProc struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
	closed bool
}

// startMCP starts "bgjob FLAGS... mcp" and connects an MCP client to it.
// The process is closed (stdin EOF) when the test ends, unless it was
// killed or closed before.
func startMCP(t *testing.T, bin string, flags ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(bin, append(flags, "mcp")...)
	p := &mcpProc{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: mcpExitGrace}, nil)
	if err != nil {
		t.Fatalf("bgjob mcp: %v; stderr: %s", err, p.stderr)
	}
	p.cs = cs
	t.Cleanup(func() { p.close() })
	return p
}

// startSettledMCP is startMCP once the server's startup pass, which runs
// in the background, is over, so that a server the test kills later
// leaves its jobs to the server or prune the test means: a server killed
// first leaves a job, and the new one says it stopped it.
func startSettledMCP(t *testing.T, bin string, flags ...string) *mcpProc {
	t.Helper()
	s := startMCP(t, bin, flags...)
	sentinel := s.start(t, map[string]any{"name": "sentinel"})
	s.kill(t)
	p := startMCP(t, bin, flags...)
	if !eventually(time.Minute, func() bool { return strings.Contains(p.stderr.String(), "stopped job "+sentinel) }) {
		t.Fatalf("bgjob mcp did not stop the job of the server killed before it; stderr: %s", p.stderr)
	}
	return p
}

// close closes the server's stdin and waits for it to exit.
func (p *mcpProc) close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	return p.cs.Close()
}

// kill kills the server with SIGKILL and waits for it.
func (p *mcpProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.close(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("bgjob mcp after SIGKILL: %v, want killed", err)
	}
}

// start calls job_start and returns the job's id.
func (p *mcpProc) start(t *testing.T, args map[string]any) string {
	t.Helper()
	if args["command"] == nil {
		args["command"] = "sleep 600"
	}
	args["wait_sec"] = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_start", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("job_start: %v %+v; stderr: %s", err, res, p.stderr)
	}
	var out struct {
		ID     string        `json:"id"`
		Status jobdir.Status `json:"status"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Status != jobdir.StatusRunning {
		t.Fatalf("job_start: %s (%v), want a running job", b, err)
	}
	return out.ID
}

// statuses returns the jobs named by ids, through bgjob status --json.
func statuses(t *testing.T, flags []string, ids ...string) map[string]jobdir.Job {
	t.Helper()
	code, out, errs := bgjob(context.Background(), append(append(flags, "status", "--json"), ids...)...)
	var jobs []jobdir.Job
	if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil {
		t.Fatalf("status: exit %d: %s %s", code, out, errs)
	}
	m := map[string]jobdir.Job{}
	for _, j := range jobs {
		m[j.ID] = j
	}
	return m
}

// wantStatus checks each job's status.
func wantStatus(t *testing.T, flags []string, want map[string]jobdir.Status, what string) {
	t.Helper()
	var ids []string
	for id := range want {
		ids = append(ids, id)
	}
	for id, j := range statuses(t, flags, ids...) {
		if j.Status != want[id] {
			t.Errorf("%s: job %s (owner %+v) is %s, want %s", what, id, j.Owner, j.Status, want[id])
		}
	}
}

// A server killed with SIGKILL leaves its jobs running, and ls shows
// whose they are; the next server stops them, and only them: not the jobs
// of a live server, not a job started with keep, not one started with
// the CLI. Closing a server's stdin stops its own jobs.
func TestMCPOwnerSIGKILL(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	host, _ := os.Hostname()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live := startSettledMCP(t, bin, tc.flags...)
			owned := live.start(t, map[string]any{})
			a := startMCP(t, bin, tc.flags...)
			orphan := a.start(t, map[string]any{"name": "orphan"})
			kept := a.start(t, map[string]any{"keep": true})
			code, out, errs := bgjob(ctx, append(tc.flags, "run", "-q", "--", "sleep 600")...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			cli := strings.TrimSpace(out)

			// ls shows the owner, in the table and in --json.
			code, out, errs = bgjob(ctx, append(tc.flags, "ls")...)
			if code != 0 {
				t.Fatalf("ls: exit %d: %s", code, errs)
			}
			for id, owner := range map[string]string{
				orphan: "mcp:" + strconv.Itoa(a.cmd.Process.Pid), kept: "mcp:" + strconv.Itoa(a.cmd.Process.Pid) + ",keep",
				owned: "mcp:" + strconv.Itoa(live.cmd.Process.Pid), cli: "-",
			} {
				if !regexp.MustCompile(`(?m)^` + id + `\s.*\s` + regexp.QuoteMeta(owner) + `\s`).MatchString(out) {
					t.Errorf("ls: no row of %s with owner %s:\n%s", id, owner, out)
				}
			}
			if !regexp.MustCompile(`(?m)^ID\s.*\sOWNER\s`).MatchString(out) {
				t.Errorf("ls: no OWNER column:\n%s", out)
			}
			j := statuses(t, tc.flags, orphan, cli)
			if o := j[orphan].Owner; o == nil || o.Kind != "mcp" || o.PID != a.cmd.Process.Pid || o.Hostname != host || o.ProcStart == "" || o.BootID == "" || o.Keep {
				t.Errorf("status --json: owner of the orphan %+v, want the server, pid %d on %s", o, a.cmd.Process.Pid, host)
			}
			if j[cli].Owner != nil {
				t.Errorf("status --json: a job started with the CLI has owner %+v", j[cli].Owner)
			}

			a.kill(t)
			all := map[string]jobdir.Status{orphan: jobdir.StatusRunning, kept: jobdir.StatusRunning,
				owned: jobdir.StatusRunning, cli: jobdir.StatusRunning}
			wantStatus(t, tc.flags, all, "after SIGKILL of its server")

			next := startMCP(t, bin, tc.flags...)
			if !eventually(time.Minute, func() bool { return statuses(t, tc.flags, orphan)[orphan].Status == jobdir.StatusKilled }) {
				t.Fatalf("the next bgjob mcp did not stop the orphan; stderr: %s", next.stderr)
			}
			if !eventually(10*time.Second, func() bool { return strings.Contains(next.stderr.String(), "stopped job "+orphan) }) {
				t.Errorf("the next bgjob mcp did not say it stopped %s; stderr: %q", orphan, next.stderr)
			}
			all[orphan] = jobdir.StatusKilled
			wantStatus(t, tc.flags, all, "after the next server started")

			// stdin EOF: the live server stops its own job, nothing else.
			if err := live.close(); err != nil {
				t.Errorf("bgjob mcp after stdin closed: %v", err)
			}
			all[owned] = jobdir.StatusKilled
			wantStatus(t, tc.flags, all, "after the live server's stdin closed")
			if err := next.close(); err != nil {
				t.Errorf("bgjob mcp: %v", err)
			}
		})
	}
}

// bgjob prune stops the jobs of a server that is gone (--dry-run only
// reports them), in text and JSON, locally and over SSH, also for a job
// a local server started on an SSH host with host.
func TestMCPOwnerPrune(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	targets := localAndSSH(t)
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live := startSettledMCP(t, bin, tc.flags...)
			owned := live.start(t, map[string]any{})
			a := startMCP(t, bin, tc.flags...)
			first, second := a.start(t, map[string]any{}), a.start(t, map[string]any{})
			a.kill(t)

			code, out, errs := bgjob(ctx, append(tc.flags, "prune", "--dry-run")...)
			if code != 0 || !strings.Contains(out, "stopped "+first) || !strings.Contains(out, "stopped "+second) {
				t.Errorf("prune --dry-run: exit %d: %q %s; want both orphans", code, out, errs)
			}
			wantStatus(t, tc.flags, map[string]jobdir.Status{first: jobdir.StatusRunning, second: jobdir.StatusRunning}, "after prune --dry-run")

			code, out, errs = bgjob(ctx, append(tc.flags, "prune", "--json")...)
			var pruned struct{ Jobs, Stopped []jobdir.Job }
			if code != 0 || json.Unmarshal([]byte(out), &pruned) != nil {
				t.Fatalf("prune --json: exit %d: %q %s", code, out, errs)
			}
			got := map[string]string{}
			for _, j := range pruned.Jobs {
				got[j.ID] = "removed " + string(j.Status)
			}
			for _, j := range pruned.Stopped {
				got[j.ID] = "stopped " + string(j.Status)
			}
			if len(got) != 2 || got[first] != "stopped killed" || got[second] != "stopped killed" {
				t.Errorf("prune --json: %v, want both orphans stopped and killed", got)
			}
			wantStatus(t, tc.flags, map[string]jobdir.Status{first: jobdir.StatusKilled, second: jobdir.StatusKilled,
				owned: jobdir.StatusRunning}, "after prune")

			// Text: one line per job stopped.
			b := startMCP(t, bin, tc.flags...)
			third := b.start(t, map[string]any{})
			b.kill(t)
			code, out, errs = bgjob(ctx, append(tc.flags, "prune")...)
			if code != 0 || strings.TrimSpace(out) != "stopped "+third {
				t.Errorf("prune: exit %d: %q %s; want %q", code, out, errs, "stopped "+third)
			}
		})
	}
	// A server of this machine starts a job on the SSH host (host); once
	// the server is gone, prune over SSH stops it: the owner is judged
	// here, where it ran.
	t.Run("host", func(t *testing.T) {
		ssh := targets[1].flags
		a := startMCP(t, bin, ssh[:4:4]...) // --root R --ssh-config C: jobs here by default
		id := a.start(t, map[string]any{"host": "bgjob-test"})
		a.kill(t)
		code, out, errs := bgjob(context.Background(), append(ssh, "prune")...)
		if code != 0 || strings.TrimSpace(out) != "stopped "+id {
			t.Errorf("prune -H: exit %d: %q %s; want %q", code, out, errs, "stopped "+id)
		}
	})
}

// With several hosts, prune --json gives each host's stopped jobs; the
// two names here are one sshd, so either may be the one that stops it.
// bgjob-two goes there by another host name (localhost), so that bgjob
// does not take the two for one host and use it once.
func TestMCPOwnerFleetPrune(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	srv, root, _ := sshJobs(t)
	cfg := filepath.Join(t.TempDir(), "config")
	kh := filepath.Join(filepath.Dir(cfg), "known_hosts")
	two := srv.ConfigEntry("bgjob-two", kh, "HostName localhost", "HostKeyAlias bgjob-two")
	if err := os.WriteFile(cfg, []byte(srv.ConfigEntry("bgjob-test", kh)+two), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.WriteKnownHosts(kh, false); err != nil {
		t.Fatal(err)
	}
	keys, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	keys = append(keys, strings.ReplaceAll(string(keys), srv.KnownHostsName(), "bgjob-two")...)
	if err := os.WriteFile(kh, keys, 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--root", root, "--ssh-config", cfg}
	a := startMCP(t, bin, append(flags, "-H", "bgjob-test")...)
	id := a.start(t, map[string]any{})
	a.kill(t)
	code, out, errs := bgjob(context.Background(), append(flags, "-H", "bgjob-test,bgjob-two", "prune", "--json")...)
	var hosts []struct {
		Host    string       `json:"host"`
		Stopped []jobdir.Job `json:"stopped"`
		Error   string       `json:"error"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &hosts) != nil || len(hosts) != 2 {
		t.Fatalf("prune --json on two hosts: exit %d: %q %s", code, out, errs)
	}
	n := 0
	for _, h := range hosts {
		for _, j := range h.Stopped {
			if j.ID != id || j.Status != jobdir.StatusKilled || j.Host != h.Host {
				t.Errorf("host %s stopped %s (%s, host %q), want only %s, killed", h.Host, j.ID, j.Status, j.Host, id)
			}
			n++
		}
	}
	if n == 0 {
		t.Errorf("prune --json on two hosts: no host stopped %s: %s", id, out)
	}
}

// TERM, INT and HUP (the client's terminal closed) end the server as
// stdin EOF does: it stops its jobs.
func TestMCPOwnerSignals(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tc := range localAndSSH(t) {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
			t.Run(tc.name+"/"+sig.String(), func(t *testing.T) {
				p := startMCP(t, bin, tc.flags...)
				id := p.start(t, map[string]any{})
				kept := p.start(t, map[string]any{"keep": true})
				if err := p.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				// The server exits with its stdin still open (the client
				// reaps it once it has seen its stdout close).
				stat := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat"
				if !eventually(time.Minute, func() bool {
					b, err := os.ReadFile(stat)
					return err != nil || strings.Contains(string(b), ") Z ")
				}) {
					b, _ := os.ReadFile(stat)
					t.Fatalf("bgjob mcp did not exit on %s (%s); stderr: %s", sig, b, p.stderr)
				}
				wantStatus(t, tc.flags, map[string]jobdir.Status{id: jobdir.StatusKilled, kept: jobdir.StatusRunning}, "after "+sig.String())
				if err := p.close(); err != nil {
					t.Errorf("bgjob mcp on %s: %v; stderr: %s", sig, err, p.stderr)
				}
			})
		}
	}
}
