package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestNameLookupPastRecentJobs: the newest job with a name wins (found by
// the name index), and when the index is stale the name is still found
// among jobs older than the newest 20 (searched with grep).
func TestNameLookupPastRecentJobs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := bgjob(ctx, append([]string{"--root", root}, args...)...)
		if code != 0 {
			t.Fatalf("bgjob %v: exit %d: %s", args, code, errs)
		}
		return strings.TrimSpace(out)
	}
	first := run("run", "-q", "-n", "target", "--", "exit 0")
	second := run("run", "-q", "-n", "target", "--", "exit 0")
	run("run", "-q", "-n", "targetx", "--", "exit 0")
	for range 25 {
		run("run", "-q", "--", "exit 0")
	}
	if got := run("status", "--json", "target"); !strings.Contains(got, `"id":"`+second+`"`) {
		t.Fatalf("status target found %s, want the newest job named target, %s (the older is %s)", got, second, first)
	}
	// With the newest removed, the name index is stale: the search finds
	// the older job among those past the newest 20.
	run("rm", second)
	if got := run("status", "--json", "target"); !strings.Contains(got, `"id":"`+first+`"`) {
		t.Fatalf("after rm, status target found %s, want %s", got, first)
	}
	if code, _, _ := bgjob(ctx, "--root", root, "status", "targe"); code != 1 {
		t.Fatalf("status of a name prefix: exit %d, want 1 (not found)", code)
	}
}

// TestConcurrentReplace: several run --replace of one name at once take
// turns on the host, each stopping the job of the one before: one job of
// the name is left running, every other is killed with nothing left of
// it, and every run succeeds, locally and over SSH.
func TestConcurrentReplace(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			const n = 4
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// The job ignores TERM: each replace waits out its grace.
					code, _, errs := bgjob(ctx, append(tc.flags, "run", "-q", "-n", "srv", "--replace", "--grace", "200ms", "--", `trap "" TERM; sleep 300`)...)
					if code != 0 {
						t.Errorf("run --replace: exit %d: %s", code, errs)
					}
				}()
			}
			wg.Wait()
			code, out, errs := bgjob(ctx, append(tc.flags, "ls", "--json", "--limit", "0")...)
			if code != 0 {
				t.Fatalf("ls: exit %d: %s", code, errs)
			}
			var l struct{ Jobs []jobdir.Job }
			if err := json.Unmarshal([]byte(out), &l); err != nil {
				t.Fatalf("ls: %v: %q", err, out)
			}
			running := 0
			for _, j := range l.Jobs {
				switch {
				case j.Name != "srv":
				case j.Status == jobdir.StatusRunning:
					running++
				case j.Status != jobdir.StatusKilled || derefCode(j.ExitCode) != 137 || j.LiveProcesses != 0:
					t.Errorf("job %s: %s, exit %d, %d live processes; want running, or killed 137 with none", j.ID, j.Status, derefCode(j.ExitCode), j.LiveProcesses)
				}
			}
			if running != 1 || len(l.Jobs) != n {
				t.Fatalf("%d jobs, %d of them running; want %d, 1 running", len(l.Jobs), running, n)
			}
		})
	}
}

// nameLock makes the lock of the --replace runs of name under root, as a
// run holds it, its owner file holding owner ("PID START\n"; "" for one
// not written yet), and returns its directory.
func nameLock(t *testing.T, root, name, owner string) string {
	t.Helper()
	dir := filepath.Join(root, jobdir.DefaultWorkspace, ".names", ".lock."+name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(owner), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReplaceLock: the lock of a name's --replace runs,
// .names/.lock.NAME, holds its holder's pid and start time. One left by a
// replace killed with SIGKILL (its holder gone) is taken over at once; one
// whose owner file is still empty (its holder between opening the file and
// writing it) is not: once the holder has written itself, the replace
// waits until it lets go.
func TestReplaceLock(t *testing.T) {
	t.Parallel()
	self, err := jobdirtest.ProcStart(os.Getpid())
	if err != nil {
		testneed.Missing(t, "/proc: %v", err)
	}
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			lock := func(name, owner string) string { return nameLock(t, tc.flags[1], name, owner) }
			replace := func(name string) jobdir.Job {
				t.Helper()
				code, out, errs := bgjob(ctx, append(tc.flags, "run", "--json", "-n", name, "--replace", "--", "sleep 300")...)
				var j jobdir.Job
				if code != 0 || json.Unmarshal([]byte(out), &j) != nil {
					t.Fatalf("run --replace -n %s: exit %d: %s %s", name, code, out, errs)
				}
				return j
			}
			// A holder that is gone: pid 2^22 is past any pid_max default.
			stale := lock("stale", "4194304 12345\n")
			replace("stale")
			if _, err := os.Stat(stale); !os.IsNotExist(err) {
				t.Errorf("the stale lock is still there after the replace: %v", err)
			}

			dir := lock("mid", "")
			done := make(chan jobdir.Job, 1)
			go func() { done <- replace("mid") }()
			// Let the replace look at the empty owner file (it takes over
			// only after 2 s without an owner), then write ours.
			time.Sleep(time.Second)
			select {
			case j := <-done:
				t.Fatalf("the replace took the lock while its owner file was empty: job %s", j.ID)
			default:
			}
			if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())+" "+self+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			select {
			case j := <-done:
				t.Fatalf("the replace took the lock of a live holder: job %s", j.ID)
			default:
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if j := <-done; j.Status != jobdir.StatusRunning {
				t.Errorf("the replace once the holder let go: job %s %s, want running", j.ID, j.Status)
			}
		})
	}
}

// TestReplaceLockTakeover: two runs that find the name's lock left by a
// holder that is gone both take it over; the slower must not remove the
// lock the faster took meanwhile. Locally, with mv and rm on the PATH
// made to stop for a second on the lock: while the replace stops there,
// the test takes the lock as a faster run would, and the replace must
// wait until the test lets go.
func TestReplaceLockTakeover(t *testing.T) {
	t.Parallel()
	self, err := jobdirtest.ProcStart(os.Getpid())
	if err != nil {
		testneed.Missing(t, "/proc: %v", err)
	}
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	shims, marks := t.TempDir(), t.TempDir()
	for _, name := range []string{"mv", "rm"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		// The first mv or rm of the lock stops a second, between "here"
		// and "done".
		shim := fmt.Sprintf(`#!/bin/sh
case "$*" in *"/.lock."*)
	if mkdir %[1]s/once 2>/dev/null; then
		: >%[1]s/here; sleep 1; %[2]s "$@"; s=$?; : >%[1]s/done; exit $s
	fi ;;
esac
exec %[2]s "$@"
`, marks, real)
		if err := os.WriteFile(filepath.Join(shims, name), []byte(shim), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(root, jobdir.DefaultWorkspace, ".names", ".lock.race")
	if err := os.MkdirAll(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lock, "owner"), []byte("4194304 12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bgjobBinary(t), "--root", root, "run", "-q", "-n", "race", "--replace", "--", "sleep 300")
	cmd.Env = append(os.Environ(), "PATH="+shims+":"+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if !eventually(time.Minute, func() bool { return exists(filepath.Join(marks, "here")) }) {
		t.Fatalf("the replace never touched the stale lock: %s", errb.String())
	}
	// A faster run takes the stale lock over: it is ours now.
	if err := os.RemoveAll(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lock, "owner"), []byte(strconv.Itoa(os.Getpid())+" "+self+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !eventually(time.Minute, func() bool { return exists(filepath.Join(marks, "done")) }) {
		t.Fatal("the replace's mv or rm of the lock never ended")
	}
	// What the replace does next takes it a moment: it must keep waiting.
	select {
	case err := <-done:
		t.Fatalf("the replace ran while the lock was ours (%v): %s %s", err, out.String(), errb.String())
	case <-time.After(time.Second):
	}
	if !exists(filepath.Join(lock, "owner")) {
		t.Error("the replace removed the lock's owner file and left it so")
	}
	if err := os.RemoveAll(lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the replace once the lock was free: %v: %s", err, errb.String())
	}
}

// TestReplaceWhoseCallerDied: a run --replace killed outright (SIGKILL)
// while it waits for its name's lock leaves no launch behind. Its script
// went on waiting, took the lock after the runs that came later, stopped
// the job the last of them had started (and reported as running), and
// started its own, which nobody had asked for any more. The test holds the
// lock; the run's script must end once its caller is gone, while the lock
// is still held.
func TestReplaceWhoseCallerDied(t *testing.T) {
	t.Parallel()
	self, err := jobdirtest.ProcStart(os.Getpid())
	if err != nil {
		testneed.Missing(t, "/proc: %v", err)
	}
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			name := "ghost-" + tc.name
			lock := nameLock(t, tc.flags[1], name, strconv.Itoa(os.Getpid())+" "+self+"\n")
			cmd := exec.Command(bgjobBinary(t), append(tc.flags, "run", "-q", "-n", name, "--replace", "--", "sleep 300")...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// The launch script, waiting for the lock: its sh -c carries
			// the name.
			scripts := func() []string {
				var pids []string
				ents, _ := os.ReadDir("/proc")
				for _, e := range ents {
					c, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
					if err == nil && bytes.Contains(c, []byte("\nbg_name="+name+"\n")) && bytes.Contains(c, []byte("bg_rgrace=")) {
						pids = append(pids, e.Name())
					}
				}
				return pids
			}
			if !eventually(time.Minute, func() bool { return len(scripts()) > 0 }) {
				t.Fatal("the replace's script never started")
			}
			cmd.Process.Kill()
			<-done
			if !eventually(10*time.Second, func() bool { return len(scripts()) == 0 }) {
				t.Fatalf("the script of a run killed outright still waits for the lock: pids %v", scripts())
			}
			if err := os.RemoveAll(lock); err != nil {
				t.Fatal(err)
			}
			if code, out, errs := bgjob(context.Background(), append(tc.flags, "ls", "--json", "--search", name)...); code != 0 || strings.Contains(out, `"id"`) {
				t.Errorf("ls -n %s: exit %d: %s %s; want no job", name, code, out, errs)
			}
		})
	}
}
