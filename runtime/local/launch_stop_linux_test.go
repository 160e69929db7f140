package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// TestStartWrapperGateHoldsAStop: a stop that finds meta.json while the
// wrapper still waits at its gate (the launcher slow between its rename
// of meta.json and its "m": descheduled, stopped, traced; strace -e
// inject=renameat:delay_exit shows it with the CLI) stops the job: once
// the gate opens, the wrapper does not start the command the stop was
// for. Under dash a trapped TERM does not cut the gate's read short, so
// the stop's signals reach only the wrapper; the command started after
// the stop had given up ran on, its job "running" with a stop marker.
func TestStartWrapperGateHoldsAStop(t *testing.T) {
	root := t.TempDir()
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, root+"/.bgjob-root", "")
	dir := filepath.Join(root, "default", jobdir.NewID(time.Now()))
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	host := gatedJob(t, dir, jobdir.Meta{Command: "echo ran; sleep 30"}, false)
	id := filepath.Base(dir)
	c, err := newClient(t, root, "default")
	if err != nil {
		t.Fatal(err)
	}
	var pgid int
	t.Cleanup(func() {
		if pgid > 0 {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	var stopped []jobdir.Job
	var stopErr error
	_, err = startWrapper(context.Background(), dir, host.umask, func(pid int) (string, bool) {
		pgid = pid
		line, ok := host.write(dir, pid, 0o022)
		if !ok {
			t.Error("meta.json not written")
			return line, ok
		}
		// The launcher is slow to open the gate: a stop finds the job
		// (meta.json, its wrapper alive) meanwhile, and returns.
		grace := time.Duration(0)
		stopped, stopErr = c.Stop(context.Background(), []string{id}, bgjob.StopOptions{Grace: &grace})
		return line, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	// The wrapper cannot record the stop before its gate opens, after the
	// stop has returned: the stop may say it is still running.
	if e := (*bgjob.Error)(nil); stopErr != nil && (!errors.As(stopErr, &e) || e.Kind != bgjob.KindBusy) {
		t.Fatalf("stop: %v", stopErr)
	}
	if len(stopped) == 1 {
		t.Logf("the stop returned %s (exit code %v)", stopped[0].Status, stopped[0].ExitCode)
	}
	if _, err := os.Stat(dir + "/stop"); err != nil {
		t.Fatalf("the stop left no stop marker: %v", err)
	}
	// The stop has returned: the job ends, without running its command.
	if !settled(func() bool {
		b, err := os.ReadFile(dir + "/exit_code")
		return err == nil && strings.HasSuffix(string(b), "\n")
	}) {
		out, _ := os.ReadFile(dir + "/stdout.log")
		t.Fatalf("a job stopped while its wrapper waited at the gate ran on after the stop: no exit_code, stdout.log %q", out)
	}
	if out, _ := os.ReadFile(dir + "/stdout.log"); len(out) != 0 {
		t.Errorf("the command of a job stopped before it started ran: stdout.log %q", out)
	}
	// A stop with no grace sends KILL: its status, whatever shell runs the
	// wrapper (under dash it was TERM's).
	if rc, _ := os.ReadFile(dir + "/exit_code"); string(rc) != "137\n" {
		t.Errorf("exit_code = %q, want 137 (the stop's KILL)", rc)
	}
}
