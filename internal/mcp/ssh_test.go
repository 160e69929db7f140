package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// host runs a job on the test sshd; after the connection drops the next
// call dials again.
func TestHostOverSSH(t *testing.T) {
	srv, _, dial, dials := sshHost(t)
	cs := serve(t, mcp.Options{Dial: dial, AllowHosts: []string{"bgjob-*"}})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "echo remote; read x; echo done", "stdin": true, "wait_sec": 0, "host": "bgjob-test"}, &st)
	if st.Host != "bgjob-test" || st.Status != jobdir.StatusRunning {
		t.Fatalf("job_start over SSH: %+v", st)
	}
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^remote$", "host": "bgjob-test"}, &w)
	if w.Matched != "remote" {
		t.Fatalf("job_wait over SSH: %+v", w)
	}
	if n := srv.DropConnections(); n == 0 {
		t.Fatal("DropConnections killed no sshd process")
	}
	// The first call after the drop may find the connection dead or fail on
	// it; job_list is safe to repeat, so it is tried again on a new one.
	var list struct{ Jobs []job }
	call(t, cs, "job_list", map[string]any{"host": "bgjob-test"}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Status != jobdir.StatusRunning {
		t.Fatalf("job_list after the drop: %+v", list)
	}
	var sent job
	call(t, cs, "job_send", map[string]any{"id": st.ID, "eof": true, "host": "bgjob-test"}, &sent)
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "host": "bgjob-test"}, &w)
	if len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited || w.Jobs[0].Host != "bgjob-test" {
		t.Fatalf("job_wait after the drop: %+v", w)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "host": "bgjob-test", "since": "start"}, &o)
	if o.Text != "remote\ndone\n" {
		t.Errorf("job_output over SSH: %q", o.Text)
	}
	// The host's jobs of this client, counted and removed there.
	var mine struct {
		Jobs   []job `json:"jobs"`
		Counts struct {
			Exited, Mine int
		} `json:"counts"`
	}
	call(t, cs, "job_list", map[string]any{"host": "bgjob-test", "mine": true}, &mine)
	if len(mine.Jobs) != 1 || mine.Jobs[0].Host != "bgjob-test" || mine.Counts.Exited != 1 || mine.Counts.Mine != 1 {
		t.Errorf("job_list mine over SSH: %+v, want the one exited job, on bgjob-test", mine)
	}
	var rm removed
	call(t, cs, "job_remove", map[string]any{"host": "bgjob-test", "all": true}, &rm)
	if len(rm.Removed) != 1 || rm.Removed[0] != st.ID {
		t.Errorf("job_remove all over SSH: %+v, want %s", rm, st.ID)
	}
	if dials.Load() != 2 {
		t.Errorf("%d dials, want 2: one, and one after the drop", dials.Load())
	}
}

// job_wait with until_output watches each job with a script of its own;
// over SSH those past the connection's sessions (8) start late, and the
// wait still ends at its timeout_sec, not one timeout_sec per round.
func TestWaitForManyOverSSH(t *testing.T) {
	_, _, dial, _ := sshHost(t)
	cs := serve(t, mcp.Options{Dial: dial, Host: "bgjob-test"})
	var ids []string
	for range 17 {
		var st job
		call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &st)
		ids = append(ids, st.ID)
	}
	const timeout = 3 * time.Second
	start := time.Now()
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": ids, "until_output": "never", "timeout_sec": timeout.Seconds()}, &w)
	took := time.Since(start)
	if !w.TimedOut || len(w.Jobs) != len(ids) {
		t.Errorf("job_wait: timed_out %v, %d jobs; want timed out, %d jobs", w.TimedOut, len(w.Jobs), len(ids))
	}
	// Three rounds of watches once took three timeouts, and waits that
	// counted naps 43.7 s on a loaded machine; the margin is for load.
	if took > timeout+10*time.Second {
		t.Errorf("job_wait of %d jobs with timeout_sec %s took %s", len(ids), timeout, took)
	}
}

// A host that cannot run a PTY job refuses job_start with pty: an answer
// (bgjob.ErrNoPTY), not a dropped connection, so the connection is kept
// for the next call (inTransit once missed ErrNoPTY and closed it). The
// test sshd gives its sessions a PATH whose script(1) answers as
// busybox's does.
func TestNoPTYKeepsConnection(t *testing.T) {
	fake := t.TempDir()
	busybox := "#!/bin/sh\necho \"script: invalid option -- '${1#-}'\" >&2\necho 'BusyBox v1.36.1 (Debian 1:1.36.1-9) multi-call binary.' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(fake, "script"), []byte(busybox), 0o755); err != nil {
		t.Fatal(err)
	}
	// sshd takes the first SetEnv of its config, sshtest's own: a Match
	// block's overrides it.
	_, _, dial, dials := sshHost(t, "Match all", "SetEnv SHLVL=1 PATH="+fake+":/usr/bin:/bin")
	cs := serve(t, mcp.Options{Dial: dial, Host: "bgjob-test"})
	var list struct{ Jobs []job }
	call(t, cs, "job_list", nil, &list)
	res := callRaw(t, cs, "job_start", map[string]any{"command": "true", "pty": true, "wait_sec": 0})
	if msg := text(res); !res.IsError || !strings.Contains(msg, "--pty needs script from util-linux") {
		t.Fatalf("job_start with pty on a host without util-linux script: %q (error %v), want the refusal", msg, res.IsError)
	}
	call(t, cs, "job_list", nil, &list)
	if len(list.Jobs) != 0 {
		t.Errorf("job_list after the refusal: %+v, want no job", list.Jobs)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1: the refusal is an answer, and the connection is kept", n)
	}
}

// sshHost starts the test sshd (host bgjob-test), with the lines extra
// added to its sshd_config, and returns it, its ssh_config and a Dialer
// for it that counts its dials in dials.
func sshHost(t *testing.T, extra ...string) (srv *sshtest.Server, cfg string, dial mcp.Dialer, dials *atomic.Int32) {
	t.Helper()
	t.Setenv("SSH_AUTH_SOCK", "")
	srv = sshtest.Start(t, extra...)
	dir := t.TempDir()
	cfg = filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "bgjob-test"); err != nil {
		t.Fatal(err)
	}
	if err := srv.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	dials = new(atomic.Int32)
	dial = func(ctx context.Context, host string) (bgjob.Runtime, func(), error) {
		dials.Add(1)
		r, err := sshrt.Dial(ctx, host, sshrt.Options{ConfigFile: cfg})
		if err != nil {
			return nil, nil, err
		}
		return r, func() { r.Close() }, nil
	}
	return srv, cfg, dial, dials
}

// A server that ends after its connection to a host dropped stops the
// jobs it started there on a new connection: it used the dead one, failed,
// and left them running.
func TestShutdownAfterADrop(t *testing.T) {
	srv, cfg, dial, _ := sshHost(t)
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Dial: dial, Host: "bgjob-test", Root: root}, nil)
	var st job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &st)
	if n := srv.DropConnections(); n == 0 {
		t.Fatal("DropConnections killed no sshd process")
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	r, err := sshrt.Dial(context.Background(), "bgjob-test", sshrt.Options{ConfigFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := bgjob.NewClient(r, root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), st.ID)
	if err != nil || len(jobs) != 1 || jobs[0].Status != jobdir.StatusKilled {
		t.Errorf("the server's job after it ended: %+v, %v; want killed", jobs, err)
	}
}

// A host whose every session blocks (a login shell that waits, here a
// ForceCommand) is given up on: each tool's call ends within the server's
// host timeout, or a wait's timeout, saying that the host did not answer.
// job_list once waited for ever; job_wait returned, late, no jobs and no
// word of the host.
func TestHostThatDoesNotAnswer(t *testing.T) {
	_, _, dial, _ := sshHost(t, "ForceCommand sleep 600")
	cs := serve(t, mcp.Options{Dial: dial, AllowHosts: []string{"bgjob-*"}, HostTimeout: 2 * time.Second})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		bound time.Duration
	}{
		{"job_list", map[string]any{}, 2 * time.Second},
		{"job_output", map[string]any{"id": "x"}, 2 * time.Second},
		{"job_stop", map[string]any{"ids": []string{"x"}, "grace_sec": 1}, 3 * time.Second},
		{"job_wait", map[string]any{"ids": []string{"x"}, "timeout_sec": 2}, 2 * time.Second},
		{"job_wait", map[string]any{"ids": []string{"x"}, "timeout_sec": 2, "until_output": "ready"}, 2 * time.Second},
		// A longer wait: the host timeout bounds the host's first answer.
		{"job_wait", map[string]any{"ids": []string{"x"}, "timeout_sec": 30}, 2 * time.Second},
		{"job_wait", map[string]any{"ids": []string{"x"}, "timeout_sec": 30, "until_output": "ready"}, 2 * time.Second},
	} {
		tc.args["host"] = "bgjob-test"
		start := time.Now()
		res := callRaw(t, cs, tc.tool, tc.args)
		took := time.Since(start)
		if msg := text(res); !res.IsError || !strings.Contains(msg, "bgjob-test") || !strings.Contains(msg, "did not answer") {
			t.Errorf("%s %v on a host that does not answer: %q (error %v), want an error that names the host", tc.tool, tc.args, msg, res.IsError)
		}
		if msg := text(res); tc.args["timeout_sec"] == 30 && !strings.Contains(msg, "no answer within 2s") {
			t.Errorf("%s %v on a host that does not answer: %q, want the host timeout's 2s", tc.tool, tc.args, msg)
		}
		// Generous: the bound, and a wait's look and load on top.
		if took > 3*tc.bound+10*time.Second {
			t.Errorf("%s %v took %s, want about %s", tc.tool, tc.args, took, tc.bound)
		}
	}
}

// A job_start whose host goes silent after it has launched the job (the
// answer never comes) fails, naming the host, and the job, which runs,
// is the server's all the same: stopped when the session ends. It was
// left running.
func TestStartCutShortIsOwned(t *testing.T) {
	dir := t.TempDir()
	// The first session runs its command (in a subshell: it is an exec)
	// and answers nothing; the others are served.
	force := filepath.Join(dir, "force.sh")
	if err := os.WriteFile(force, []byte("#!/bin/sh\nif mkdir "+dir+"/first 2>/dev/null; then (eval \"$SSH_ORIGINAL_COMMAND\") >/dev/null; exec sleep 600; fi\neval \"$SSH_ORIGINAL_COMMAND\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, cfg, dial, _ := sshHost(t, "ForceCommand "+force)
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Dial: dial, AllowHosts: []string{"bgjob-*"}, Root: root, HostTimeout: 5 * time.Second}, nil)
	res := callRaw(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0, "host": "bgjob-test"})
	if msg := text(res); !res.IsError || !strings.Contains(msg, "did not answer") {
		t.Fatalf("job_start on a host that went silent: %q (error %v), want that it did not answer", msg, res.IsError)
	}
	r, err := sshrt.Dial(context.Background(), "bgjob-test", sshrt.Options{ConfigFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := bgjob.NewClient(r, root, "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(context.Background(), bgjob.ListOptions{})
	if err != nil || len(page.Jobs) != 1 || page.Jobs[0].Status != jobdir.StatusRunning {
		t.Fatalf("the host's jobs: %+v, %v; want the one launched, running", page.Jobs, err)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	jobs, err := c.Status(context.Background(), page.Jobs[0].ID)
	if err != nil || len(jobs) != 1 || jobs[0].Status != jobdir.StatusKilled {
		t.Errorf("the job after the session ended: %+v, %v; want killed", jobs, err)
	}
}
