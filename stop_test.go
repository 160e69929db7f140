package bgjob_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestStopSaysAJobStillRuns: a stop after which the job's wrapper has
// still not recorded an end (here a stand-in that ignores TERM and is
// never sent KILL, as a wrapper is not; a real one stuck in the kernel)
// fails with a busy error naming the job, beside the job it reports
// running. It succeeded, and the job ran on.
func TestStopSaysAJobStillRuns(t *testing.T) {
	t.Parallel()
	wrapper := exec.Command("sh", "-c", `trap "" TERM; while :; do sleep 1; done`)
	wrapper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-wrapper.Process.Pid, syscall.SIGKILL); wrapper.Wait() })
	root := filepath.Join(t.TempDir(), "root")
	job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Meta: jobdir.Meta{PID: wrapper.Process.Pid}})
	c, err := bgjob.NewClient(local.New(), root, "w")
	if err != nil {
		t.Fatal(err)
	}
	grace := 100 * time.Millisecond
	jobs, err := c.Stop(context.Background(), []string{job.Meta.ID}, bgjob.StopOptions{Grace: &grace})
	var e *bgjob.Error
	if len(jobs) != 1 || jobs[0].Status != jobdir.StatusRunning || !errors.As(err, &e) || e.Kind != bgjob.KindBusy || e.Ref != job.Meta.ID {
		t.Errorf("Stop = %+v, %v; want the job running and a busy error about it", jobs, err)
	}
}
