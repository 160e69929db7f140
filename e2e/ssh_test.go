package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
)

// bgjob runs the CLI in-process and returns its exit status and output.
func bgjob(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestSSHConnectionDrop: a job started over SSH is untouched when the
// connection watching it dies and sshd restarts, and afterwards status and
// wait report its real exit status.
func TestSSHConnectionDrop(t *testing.T) {
	t.Parallel()
	srv, _, g := sshJobs(t)
	ctx := context.Background()

	// The job runs until the test lets it end, so that it is still running
	// after the drop however long the drop takes on a loaded machine.
	gate := filepath.Join(t.TempDir(), "go")
	code, id, errs := bgjob(ctx, append(g, "run", "-q", "--", "while [ ! -e "+gate+" ]; do sleep 0.1; done; exit 7")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)

	// A wait holds a session open; kill the sshd serving it. The wait
	// ends with a connection error, not the job's status.
	waitThroughDrop(t, srv, g, id)

	code, out, errs := bgjob(ctx, append(g, "status", "--json", id)...)
	if code != 0 {
		t.Fatalf("status after restart: %d %s", code, errs)
	}
	var jobs []jobdir.Job
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("status output %q: %v", out, err)
	}
	if jobs[0].Status != jobdir.StatusRunning || jobs[0].Host != "bgjob-test" {
		t.Fatalf("after the drop the job is %s on %q, want running on bgjob-test", jobs[0].Status, jobs[0].Host)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := bgjob(ctx, append(g, "wait", id)...); code != 7 {
		t.Fatalf("wait after reconnect: exit %d, want 7 (%s)", code, errs)
	}
}

// waitThroughDrop runs bgjob wait on job id over SSH, and once its script
// runs on the host, kills every sshd process serving a connection and
// restarts sshd. It fails the test unless the drop ended the wait with a
// connection error, and returns wait's exit status and stderr.
func waitThroughDrop(t *testing.T, srv *sshtest.Server, g []string, id string) (int, string) {
	t.Helper()
	type result struct {
		code int
		errs string
	}
	waited := make(chan result, 1)
	go func() {
		code, _, errs := bgjob(context.Background(), append(g, "wait", id)...)
		waited <- result{code, errs}
	}()
	// Drop the connection once the wait's script runs on the host: then
	// its session is up. Other scripts under root, such as the pass run
	// leaves behind, do not count: dropping while wait still connects
	// proves nothing about a session.
	root := g[slices.Index(g, "--root")+1]
	if !eventually(10*time.Second, func() bool { return waitScriptRuns(root) }) {
		t.Fatal("the wait's script did not start on the host")
	}
	if n := srv.DropConnections(); n == 0 {
		t.Fatal("no sshd process served a connection: nothing was dropped")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-waited:
		if r.code != 1 || !strings.HasPrefix(r.errs, "bgjob: error: ") || !strings.Contains(r.errs, "bgjob-test: ") || !strings.Contains(r.errs, "connection") {
			t.Fatalf("wait exited %d with stderr %q, want 1 and the error of a dropped connection", r.code, r.errs)
		}
		return r.code, r.errs
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not notice its connection died")
		return 0, ""
	}
}

// TestSSHUnreachable: a port nobody listens on gives a clear error
// quickly, in the README's shape, "bgjob: error: HOST: reason", alone as
// in a fan-out, on stderr as in --json.
func TestSSHUnreachable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	code, _, errs := bgjob(context.Background(), "--ssh-config", "/dev/null", "-H", "127.0.0.1:1", "ls")
	want := "bgjob: error: 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n"
	if code != 1 || errs != want {
		t.Fatalf("exit %d, stderr %q: want %q", code, errs, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to fail", d)
	}
	code, _, errs = bgjob(context.Background(), "--ssh-config", "/dev/null", "-H", "127.0.0.1:1,127.0.0.1:2", "ls")
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "bgjob: error: 127.0.0.1:2: dial tcp 127.0.0.1:2: connect: connection refused\n") {
		t.Fatalf("fan-out: exit %d, stderr %q: want the line %q and one of 127.0.0.1:2", code, errs, want)
	}
	_, out, _ := bgjob(context.Background(), "--ssh-config", "/dev/null", "-H", "127.0.0.1:1", "ls", "--json")
	if want := `{"error":"127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused","kind":"unreachable"}` + "\n"; out != want {
		t.Fatalf("--json: stdout %q, want %q", out, want)
	}
}

// TestSSHFollowCancel: cancelling logs --follow and wait over SSH ends
// their scripts on the host; nothing is left polling there.
func TestSSHFollowCancel(t *testing.T) {
	t.Parallel()
	_, root, g := sshJobs(t)
	code, id, errs := bgjob(context.Background(), append(g, "run", "-q", "--", "sleep 60")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)
	for _, verb := range [][]string{{"logs", "--follow", id}, {"wait", id}} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		var errs string
		go func() {
			code, _, e := bgjob(ctx, append(g, verb...)...)
			errs = e
			done <- code
		}()
		// The script on the host names the job's directory in its text.
		if !eventually(5*time.Second, func() bool { return scriptsFor(root) > 0 }) {
			t.Fatalf("%s: no script running on the host", verb[0])
		}
		cancel()
		select {
		case code := <-done:
			if code != 130 {
				t.Errorf("%s exited %d after an interrupt, want 130; stderr %q", verb[0], code, errs)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not return after cancel", verb[0])
		}
		if !eventually(5*time.Second, func() bool { return scriptsFor(root) == 0 }) {
			t.Fatalf("%s: %d scripts still running on the host after cancel", verb[0], scriptsFor(root))
		}
	}
}

// hostScripts returns the text of the scripts bgjob runs on this machine
// for jobs under root: the "sh -c SCRIPT" processes whose script names it
// (not the jobs themselves).
func hostScripts(root string) []string {
	var scripts []string
	for _, args := range processArgs() {
		if len(args) > 2 && filepath.Base(args[0]) == "sh" && args[1] == "-c" && strings.Contains(args[2], root) {
			scripts = append(scripts, args[2])
		}
	}
	return scripts
}

// processArgs returns the argv of every process on this machine.
func processArgs() [][]string {
	var all [][]string
	cmds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmds {
		if b, err := os.ReadFile(p); err == nil {
			all = append(all, strings.Split(string(b), "\x00"))
		}
	}
	return all
}

// scriptsFor counts the scripts bgjob runs for jobs under root.
func scriptsFor(root string) int { return len(hostScripts(root)) }

// waitScriptRuns reports whether a wait script (the only one that sets
// bg_any, see shellgen/sh/wait.sh) for jobs under root runs.
func waitScriptRuns(root string) bool {
	for _, s := range hostScripts(root) {
		if strings.Contains(s, "\nbg_any=") {
			return true
		}
	}
	return false
}

func eventually(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// TestSSHWarningOnStderr: runtime/ssh reports a warning (here: a new host
// key recorded under StrictHostKeyChecking accept-new) through its Warn
// callback, and the CLI prints it on stderr, never on stdout.
func TestSSHWarningOnStderr(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "bgjob-test", "StrictHostKeyChecking accept-new"); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	code, out, errs := bgjob(context.Background(), "--root", root, "--ssh-config", cfg, "-H", "bgjob-test", "ls", "--json")
	if code != 0 {
		t.Fatalf("ls: %d %s", code, errs)
	}
	want := "bgjob: warning: permanently added " + srv.KnownHostsName()
	if !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", errs, want)
	}
	var list struct{ Jobs []jobdir.Job }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Jobs) != 0 {
		t.Errorf("stdout %q (%v), want only an empty JSON listing", out, err)
	}
}
