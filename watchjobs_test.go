package bgjob_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// watchWait bounds the wait for a report that must come.
const watchWait = 20 * time.Second

func runStopped(t *testing.T, c *bgjob.Client, script string) jobdir.Job {
	t.Helper()
	j, err := c.Run(context.Background(), bgjob.Spec{Argv: []string{script}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gone before the test's directories are removed: a wrapper that
		// was still writing its last files made the removal fail.
		syscall.Kill(-j.PGID, syscall.SIGKILL)
		for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-j.PGID, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	return j
}

func reported(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(watchWait):
		t.Fatalf("no report of %s", what)
	}
}

// drain takes the report that is waiting, if any.
func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// WatchJobs reports a job made in the workspace, and with all a job made
// in a workspace that did not exist when the watch began, and the next job
// there; it fails on a workspace not made yet.
func TestWatchJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WatchJobs(ctx, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WatchJobs of a workspace not made yet: %v, want ErrNotExist", err)
	}
	runStopped(t, c, "true")
	ch, err := c.WatchJobs(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	runStopped(t, c, "true")
	reported(t, ch, "a job made")

	all, err := c.WatchJobs(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.InWorkspace("other")
	if err != nil {
		t.Fatal(err)
	}
	runStopped(t, other, "true")
	reported(t, all, "a job made in a new workspace")
	// The report comes once the new workspace is watched too: a job made
	// after it is reported.
	drain(all)
	runStopped(t, other, "true")
	reported(t, all, "a job made in the new workspace")
}

// WatchFiles sends the names of the files a job writes as it ends.
func TestWatchFiles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	j := runStopped(t, c, "while [ ! -e "+gate+" ]; do sleep 0.05; done")
	names, err := c.WatchFiles(ctx, []jobdir.Job{j})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(watchWait)
	for {
		select {
		case name := <-names:
			if name == jobdir.ExitCodeFile {
				return
			}
		case <-deadline:
			t.Fatal("no exit_code among the names WatchFiles sent")
		}
	}
}

// MayHaveEnded is quiet while a running job's wrapper is alive, and
// reports a wrapper killed with SIGKILL, which writes no file: Status then
// says the job ended. It reports what it cannot tell of too: a job not
// running, a wrapper of another start or boot.
func TestMayHaveEnded(t *testing.T) {
	ctx := context.Background()
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	j := runStopped(t, c, "sleep 600")
	if j.Status != jobdir.StatusRunning || j.PID <= 0 || j.ProcStart == "" {
		t.Fatalf("the job started as %s, pid %d, start %q", j.Status, j.PID, j.ProcStart)
	}
	if c.MayHaveEnded(nil) {
		t.Error("MayHaveEnded of no job: true")
	}
	if c.MayHaveEnded([]jobdir.Job{j}) {
		t.Error("MayHaveEnded of a running job: true")
	}
	for _, tc := range []struct {
		name string
		edit func(*jobdir.Job)
	}{
		{"queued", func(j *jobdir.Job) { j.Status = jobdir.StatusQueued }},
		{"another start", func(j *jobdir.Job) { j.ProcStart += "1" }},
		{"another boot", func(j *jobdir.Job) { j.BootID = "another" }},
		{"no pid", func(j *jobdir.Job) { j.PID = 0 }},
	} {
		o := j
		tc.edit(&o)
		if !c.MayHaveEnded([]jobdir.Job{j, o}) {
			t.Errorf("MayHaveEnded of a job of %s: false", tc.name)
		}
	}
	if err := syscall.Kill(j.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !eventually(watchWait, func() bool { return c.MayHaveEnded([]jobdir.Job{j}) }) {
		t.Fatal("MayHaveEnded never reported the wrapper killed")
	}
	got, err := c.Status(ctx, j.ID)
	if err != nil || len(got) != 1 || !got[0].Status.Ended() {
		t.Errorf("Status after the wrapper was killed: %v %v, want an ended job", got, err)
	}
}

// TestWatchJobsSeesALaunchEnd: a job directory made without its meta.json
// (a launch under way, which List passes over) is reported once more
// when its meta.json appears, in the workspace's watch and in every
// workspace's: a lister woken by the directory alone listed nothing new
// and, with nothing else changing in the workspace, never saw the job
// (bgjob top showed a job started after it only at its next interval).
func TestWatchJobsSeesALaunchEnd(t *testing.T) {
	for _, all := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		root := t.TempDir()
		c, err := bgjob.NewClient(local.New(), root, "")
		if err != nil {
			t.Fatal(err)
		}
		runStopped(t, c, "true")
		ch, err := c.WatchJobs(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "default", jobdir.NewID(time.Now()))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		reported(t, ch, "a job directory made")
		// What else the directory's making reports comes now, not later.
		time.Sleep(100 * time.Millisecond)
		drain(ch)
		tmp := filepath.Join(dir, jobdir.MetaFile+".tmp")
		if err := os.WriteFile(tmp, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, jobdir.MetaFile)); err != nil {
			t.Fatal(err)
		}
		reported(t, ch, fmt.Sprintf("the meta.json of a launch (all %v)", all))
	}
}
