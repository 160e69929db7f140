package bgjob_test

import (
	"context"
	"errors"
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
	t.Cleanup(func() { syscall.Kill(-j.PGID, syscall.SIGKILL) })
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
