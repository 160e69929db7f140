package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sessions counts the sessions the sshd has started (its log, LogLevel
// VERBOSE, has a line for each command it runs).
func sessions(log func() string) int {
	return strings.Count(log(), "Starting session: command")
}

// watchRuns reports whether the watch of a follow of events (watch.sh,
// the one script that sets bg_wlive) runs on the host for jobs under root.
func watchRuns(root string) bool {
	for _, s := range hostScripts(root) {
		if strings.Contains(s, "\nbg_wlive=") {
			return true
		}
	}
	return false
}

// TestSSHEventsFollow: a follow of events over SSH holds one watch script
// on the host for its whole length and opens a session only for a look
// the watch asks for: five idle seconds open none (where the follow
// polled, a session every 2 s), and a job's end is told. Once the follow
// ends (--until-done), nothing of it runs on the host.
func TestSSHEventsFollow(t *testing.T) {
	t.Parallel()
	srv, root, g := sshJobs(t)
	ctx := context.Background()
	gate := filepath.Join(t.TempDir(), "go")
	code, id, errs := bgjob(ctx, append(g, "run", "-q", "--", "while [ ! -e "+gate+" ]; do sleep 0.05; done; exit 5")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)
	type result struct {
		code      int
		out, errs string
	}
	followed := make(chan result, 1)
	go func() {
		code, out, errs := bgjob(ctx, append(g, "events", "--follow", "--until-done", "--json")...)
		followed <- result{code, out, errs}
	}()
	if !eventually(10*time.Second, func() bool { return watchRuns(root) }) {
		t.Fatal("no watch script runs on the host")
	}
	// The look the watch's first report brings: let it come.
	time.Sleep(time.Second)
	idle := sessions(srv.Log)
	if idle == 0 {
		t.Fatalf("the sshd's log tells no session:\n%s", srv.Log())
	}
	time.Sleep(5 * time.Second)
	if n := sessions(srv.Log) - idle; n != 0 {
		t.Errorf("%d sessions in 5 s of an idle follow, want none", n)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-followed:
		if r.code != 0 || !strings.Contains(r.out, `"id":"`+id+`"`) || !strings.Contains(r.out, `"event":"ended","status":"exited","exit_code":5`) {
			t.Errorf("events: exit %d, stdout %q, stderr %q; want 0 and the job's end", r.code, r.out, r.errs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follow did not end with the job")
	}
	if !eventually(5*time.Second, func() bool { return scriptsFor(root) == 0 }) {
		t.Errorf("%d scripts still run on the host after the follow", scriptsFor(root))
	}
}
