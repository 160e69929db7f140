package jobdirtest_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// outcome is what bgjob reports of a job, as far as the fabricator decides.
type outcome struct {
	Status                       jobdir.Status
	ExitCode                     *int
	Reason, Signal               string
	StdoutDropped, StderrDropped int64
	Ended                        bool
}

func intp(n int) *int { return &n }

// TestMakeDerives fabricates a job in each state and checks that bgjob,
// reading it with the real status script, derives the intended status.
func TestMakeDerives(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		name string
		job  jobdirtest.Job
		want outcome
	}{
		{"exited 0", jobdirtest.Job{}, outcome{Status: jobdir.StatusExited, ExitCode: intp(0), Ended: true}},
		{"exited 3", jobdirtest.Job{ExitCode: 3}, outcome{Status: jobdir.StatusExited, ExitCode: intp(3), Ended: true}},
		{"killed", jobdirtest.Job{State: jobdirtest.Killed},
			outcome{Status: jobdir.StatusKilled, ExitCode: intp(143), Reason: "stop", Signal: "TERM", Ended: true}},
		{"killed by the timeout with KILL", jobdirtest.Job{State: jobdirtest.Killed, ExitCode: 137, Reason: "timeout", Signal: "KILL"},
			outcome{Status: jobdir.StatusKilled, ExitCode: intp(137), Reason: "timeout", Signal: "KILL", Ended: true}},
		{"running", jobdirtest.Job{State: jobdirtest.Running}, outcome{Status: jobdir.StatusRunning}},
		{"vanished", jobdirtest.Job{State: jobdirtest.Vanished}, outcome{Status: jobdir.StatusLost, Reason: "vanished"}},
		{"rebooted", jobdirtest.Job{State: jobdirtest.Rebooted}, outcome{Status: jobdir.StatusLost, Reason: "reboot"}},
		{"capped logs", jobdirtest.Job{StdoutDropped: 65536, StderrDropped: 7},
			outcome{Status: jobdir.StatusExited, ExitCode: intp(0), StdoutDropped: 65536, StderrDropped: 7, Ended: true}},
	}
	root := filepath.Join(t.TempDir(), "root")
	c, err := bgjob.NewClient(local.New(), root, "w")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Meta.Name = "n-" + filepath.Base(t.Name())
			d := jobdirtest.Make(t, root, "w", tt.job)
			if (d.Process != nil) != (tt.job.State == jobdirtest.Running) {
				t.Errorf("Process = %v for state %d", d.Process, tt.job.State)
			}
			// By id and, through the name index, by name.
			for _, ref := range []string{d.Meta.ID, d.Meta.Name} {
				jobs, err := c.Status(ctx, ref)
				if err != nil {
					t.Fatal(err)
				}
				j := jobs[0]
				got := outcome{Status: j.Status, ExitCode: j.ExitCode, Reason: j.Reason, Signal: j.Signal,
					StdoutDropped: j.StdoutDropped, StderrDropped: j.StderrDropped, Ended: j.EndedAt != nil}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("status %s (-want +got):\n%s", ref, diff)
				}
				if diff := cmp.Diff(d.Meta, j.Meta); diff != "" {
					t.Errorf("meta.json of %s (-want +got):\n%s", ref, diff)
				}
				if j.Dir != d.Path || j.Error != "" {
					t.Errorf("dir %q, error %q; want %q and none", j.Dir, j.Error, d.Path)
				}
			}
			b, err := os.ReadFile(filepath.Join(root, "w", jobdir.NamesDir, d.Meta.Name))
			if err != nil || string(b) != d.Meta.ID+"\n" {
				t.Errorf("name index = %q, %v; want %s", b, err, d.Meta.ID)
			}
		})
	}
}

// TestEnd ends a running job as its wrapper would.
func TestEnd(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	d := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "hello\n"})
	d.End(t, 5)
	c, err := bgjob.NewClient(local.New(), root, "w")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(ctx, d.Meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j := jobs[0]; j.Status != jobdir.StatusExited || j.ExitCode == nil || *j.ExitCode != 5 || j.EndedAt == nil {
		t.Errorf("after End: %s, %v, %v; want exited 5 with ended_at", j.Status, j.ExitCode, j.EndedAt)
	}
	if err := d.Process.Signal(syscall.Signal(0)); err == nil {
		t.Error("the process Make started is still alive after End")
	}
}

// TestMakeCreating leaves a directory without meta.json, which bgjob does
// not list while it may be a launch under way (until it has not changed
// for a minute), and lists as unreadable after that.
func TestMakeCreating(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	d := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Creating})
	if es, err := os.ReadDir(d.Path); err != nil || len(es) != 0 {
		t.Fatalf("ReadDir(%s) = %v, %v; want an empty directory", d.Path, es, err)
	}
	c, err := bgjob.NewClient(local.New(), root, "w")
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(context.Background(), bgjob.ListOptions{})
	if err != nil || len(page.Jobs) != 0 {
		t.Errorf("List = %+v, %v; want no job: a launch under way is not one yet", page.Jobs, err)
	}
	// A launch cut short: reported as unreadable, never hidden.
	cut := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Creating,
		Meta: jobdir.Meta{StartedAt: time.Now().Add(-2 * time.Minute)}})
	page, err = c.List(context.Background(), bgjob.ListOptions{})
	if err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != cut.Meta.ID || page.Jobs[0].Status != jobdir.StatusUnreadable || page.Jobs[0].Error != "meta.json is missing" {
		t.Errorf("List = %+v, %v; want one unreadable job, %s, meta.json missing", page.Jobs, err, cut.Meta.ID)
	}
}

// TestMakeRefuses: a killed job's status is a signal's, and a running job
// needs a live process.
func TestMakeRefuses(t *testing.T) {
	mk, err := jobdirtest.NewMaker(filepath.Join(t.TempDir(), "root"))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []jobdirtest.Job{
		{State: jobdirtest.Killed, ExitCode: 1},
		{State: jobdirtest.Running},
		{State: jobdirtest.Running, Meta: jobdir.Meta{PID: 1 << 30}},
	} {
		if _, _, err := mk.Make("w", j); err == nil {
			t.Errorf("Make(%+v) succeeded", j)
		}
	}
}
