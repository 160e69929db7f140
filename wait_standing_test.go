//go:build !windows

package bgjob_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// slowWaits is this machine, where a wait's script, once begun, does not
// answer until the caller gives up on it (a loaded host), while other
// scripts run at once.
type slowWaits struct{ bgjob.Runtime }

func (r slowWaits) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	if strings.Contains(script, "\nbg_any=") {
		io.WriteString(stdout, "\n@@bgjob-begin@@\nB\t\n")
		<-ctx.Done()
		return ctx.Err()
	}
	return r.Runtime.Exec(ctx, script, stdin, stdout)
}

// A wait whose host did not answer by its timeout still reports the jobs as
// they stand when a look at them answers: job_wait said timed_out with no
// jobs on a loaded machine.
func TestWaitTimeoutReportsJobs(t *testing.T) {
	root := t.TempDir()
	fast, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := fast.Run(ctx, bgjob.Spec{Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fast.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
	slow, err := bgjob.NewClient(slowWaits{local.New()}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	jobs, err := slow.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, bgjob.ErrTimeout) {
		t.Fatalf("Wait = %v, want ErrTimeout", err)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("Wait took %v", time.Since(start))
	}
	if len(jobs) != 1 || jobs[0].ID != j.ID || jobs[0].Status != jobdir.StatusRunning {
		t.Errorf("Wait's jobs = %+v, want the job running", jobs)
	}
}
