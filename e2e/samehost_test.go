package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/sshtest"
)

// TestSameHostTwice: two ssh_config aliases of one user@host:port share a
// root. A fan-out over both runs once, on the first, and says on stderr
// that the second alias is the first one; before, run failed on the second
// alias with "job directory exists" after a warning that the job's own
// name was still running. (Two distinct hosts on one machine would share
// the root too: that aliases that differ are kept apart is tested in
// runtime/ssh, TestResolveEndpoint.)
func TestSameHostTwice(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	if err := srv.WriteKnownHosts(kh, false); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte(srv.ConfigEntry("a", kh)+srv.ConfigEntry("b", kh)), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	g := []string{"--root", root, "--ssh-config", cfgFile, "-H", "a,b"}
	ctx := context.Background()

	code, out, errs := bgjob(ctx, append(g, "run", "--json", "-n", "twice", "--", "echo hi")...)
	warning := fmt.Sprintf("bgjob: warning: b is the same host as a (%s@127.0.0.1:%d): using it once\n", srv.User, srv.Port)
	if code != 0 || errs != warning {
		t.Fatalf("run on a,b: exit %d, stderr %q; want 0 and only %q", code, errs, warning)
	}
	var ran []fleetHost
	if err := json.Unmarshal([]byte(out), &ran); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	if len(ran) != 1 || ran[0].Host != "a" || ran[0].Job == nil {
		t.Fatalf("run --json: want one job, on a, got %s", out)
	}

	// The other verbs go to the host once too, in the form of a fan-out
	// (a HOST column, an object per host): wait sees the job once.
	code, out, errs = bgjob(ctx, append(g, "wait", "--json", "twice")...)
	if code != 0 || errs != warning {
		t.Fatalf("wait: exit %d, stderr %q", code, errs)
	}
	var waited []fleetHost
	if err := json.Unmarshal([]byte(out), &waited); err != nil || len(waited) != 1 || len(waited[0].Jobs) != 1 {
		t.Fatalf("wait --json: %v: want the job once, on a, got %s", err, out)
	}
	code, out, _ = bgjob(ctx, append(g, "ls")...)
	if code != 0 || !strings.HasPrefix(out, "HOST") || strings.Count(out, "twice") != 1 {
		t.Fatalf("ls on a,b: exit %d, want a table with a HOST column and the job once:\n%s", code, out)
	}
}

// A follow of several hosts ends when its reader goes away, as one host's
// does ("bgjob -H a,b logs -f dev | grep -m1 ready"), without waiting
// for the jobs' next writes, and exits 0: the reader has what it wanted.
// Before, only one host's follow watched its reader, and several hosts'
// ran until their jobs ended.
func TestFollowSeveralHostsReaderGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var cfg strings.Builder
	for _, name := range []string{"a", "b"} {
		srv := sshtest.Start(t)
		kh := filepath.Join(dir, "known_hosts_"+name)
		if err := srv.WriteKnownHosts(kh, false); err != nil {
			t.Fatal(err)
		}
		cfg.WriteString(srv.ConfigEntry(name, kh))
	}
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	g := []string{"--root", root, "--ssh-config", cfgFile, "-H", "a,b"}
	ctx := context.Background()
	// Both servers run on this machine, with one root: the job run on a
	// is b's too.
	if code, _, errs := bgjob(ctx, "--root", root, "--ssh-config", cfgFile, "-H", "a", "run", "-q", "-n", "quiet", "--", "echo ready; sleep 600"); code != 0 {
		t.Fatalf("run on a: exit %d: %s", code, errs)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	ended := make(chan int, 1)
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var errb bytes.Buffer
	go func() {
		code := cli.Run(fctx, append(g, "logs", "-f", "quiet"), strings.NewReader(""), pw, &errb)
		pw.Close()
		ended <- code
	}()
	// grep -m1 ready: the first line that says ready, then the reader goes.
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasSuffix(line, ": ready\n") {
		t.Fatalf("the follow's first line: %q, %v; want HOST: ready", line, err)
	}
	pr.Close()
	select {
	case code := <-ended:
		if code != 0 {
			t.Errorf("logs -f on a,b after its reader went: exit %d, want 0; stderr %q", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("logs -f on a,b still follows a minute after its reader went")
	}
}
