package bgjob_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// A command over MaxCommand bytes (a script, or an argv's words together)
// is refused before anything starts, saying the limit.
func TestRunRefusesLargeCommand(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", bgjob.MaxCommand/2+1)
	for _, argv := range [][]string{{"#" + big + big}, {"true", big, big}} {
		j, err := c.Run(context.Background(), bgjob.Spec{Argv: argv})
		if !errors.Is(err, bgjob.ErrUsage) || !strings.Contains(err.Error(), "at most 1048576") {
			t.Errorf("Run of %d words: job %+v, error %v; want ErrUsage naming the limit", len(argv), j, err)
		}
	}
	page, err := c.List(context.Background(), bgjob.ListOptions{})
	if err != nil || len(page.Jobs) != 0 {
		t.Errorf("after the refused runs: %d jobs (%v), want none", len(page.Jobs), err)
	}
}

// A timeout beyond MaxTimeout, or negative, is refused before anything
// starts: the host's timer would overflow, or never fire.
func TestRunRefusesTimeout(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{bgjob.MaxTimeout + time.Second, -time.Second} {
		j, err := c.Run(context.Background(), bgjob.Spec{Argv: []string{"sleep 600"}, Timeout: d})
		if j.PGID > 1 {
			syscall.Kill(-j.PGID, syscall.SIGKILL)
		}
		if !errors.Is(err, bgjob.ErrUsage) {
			t.Errorf("Run with timeout %s: job %+v, error %v; want ErrUsage", d, j, err)
		}
	}
	page, err := c.List(context.Background(), bgjob.ListOptions{})
	if err != nil || len(page.Jobs) != 0 {
		t.Errorf("after the refused runs: %d jobs (%v), want none", len(page.Jobs), err)
	}
}

// send --eof right after run ends the job's input even when the wrapper
// had not yet started the command: the command's end of the stdin FIFO
// is opened before the launch returns, while the keeper still holds the
// FIFO (opened later, it waited for a writer forever once the keeper was
// gone, and the job hung; seen under load in TestMaxBytesCursor).
func TestSendEOFRightAfterRun(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 20 {
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"cat; echo done"}, Stdin: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Send(ctx, j.ID, strings.NewReader(""), bgjob.SendOptions{EOF: true}); err != nil {
			t.Fatal(err)
		}
		jobs, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: 30 * time.Second})
		if err != nil || len(jobs) != 1 || jobs[0].Status != "exited" {
			c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
			t.Fatalf("job after send --eof: %+v, %v; want it exited", jobs, err)
		}
	}
}

// TestNameMeansTheJobLaunchedLast: a name means the job launched last
// with it, whatever the ids: a run --replace makes its id before it stops
// the name's jobs, and a caller whose clock was an hour ahead gave the job
// it stopped an id newer than its own. The name index once kept the newest
// id, and the name then meant the job the replace had killed: stop NAME
// left the running one alone.
func TestNameMeansTheJobLaunchedLast(t *testing.T) {
	t.Parallel()
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { c.Stop(ctx, nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}) })
	ahead, err := c.Run(ctx, bgjob.Spec{ID: jobdir.NewID(time.Now().Add(time.Hour)), Name: "srv", Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	last, err := c.Run(ctx, bgjob.Spec{Name: "srv", Replace: true, Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(ctx, "srv")
	if err != nil || len(jobs) != 1 || jobs[0].ID != last.ID || jobs[0].Status != jobdir.StatusRunning {
		t.Errorf("status srv = %+v, %v; want %s, launched last and running (not %s, which it replaced)", jobs, err, last.ID, ahead.ID)
	}
}

// A look at one job among hundreds costs what it costs among ten: run
// --replace looks at every job of the name, and stop at every job it is
// given; when what a script learnt of each meta.json was kept in one list
// searched by pattern, 400 ended jobs of the name made --replace take
// over a minute (past the CLI's 32 s host timeout: nothing started), and
// stop of 400 ids the same.
func TestReplaceAmongHundredsOfJobsOfTheName(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk, err := jobdirtest.NewMaker(root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	start := time.Now().Add(-time.Hour)
	for i := range 400 {
		m, _, err := mk.Make(jobdir.DefaultWorkspace, jobdirtest.Job{
			State: jobdirtest.Exited,
			Meta:  jobdir.Meta{ID: jobdir.NewID(start.Add(time.Duration(i) * time.Second)), Name: "srv"},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background(), nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}) })
	// The CLI's default --host-timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 32*time.Second)
	defer cancel()
	j, err := c.Run(ctx, bgjob.Spec{Name: "srv", Replace: true, Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatalf("run --replace among 400 ended jobs of the name: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 32*time.Second)
	defer cancel()
	stopped, err := c.Stop(ctx, append(ids, j.ID), bgjob.StopOptions{Grace: new(time.Duration(0))})
	if err != nil || len(stopped) != len(ids)+1 {
		t.Fatalf("stop of 401 jobs: %d jobs, %v", len(stopped), err)
	}
}
