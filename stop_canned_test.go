package bgjob

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// cannedRuntime answers every script with out.
type cannedRuntime struct{ out string }

func (r cannedRuntime) Exec(_ context.Context, _ string, _ io.Reader, stdout io.Writer) error {
	_, err := io.WriteString(stdout, r.out)
	return err
}

func (cannedRuntime) Host() string { return "canned" }

// TestStopWithProcessesLeftFails: a stop whose last look still finds
// processes of the job (a chain that starts itself anew as fast as it is
// killed) fails, naming how many, though the job's wrapper has recorded
// that the stop killed it; it once said "killed (stop)" and exited 0.
func TestStopWithProcessesLeftFails(t *testing.T) {
	id := jobdir.NewID(time.Now())
	m := jobdir.Meta{Version: jobdir.Version, ID: id, Workspace: "default", Command: "respawn", Env: []string{},
		StartedAt: time.Now().UTC().Truncate(time.Millisecond), PID: 4242, PGID: 4242, ProcStart: "1", BootID: "boot"}
	meta, err := jobdir.EncodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		live string
		fail bool
	}{{"0", false}, {"2", true}} {
		out := "\n@@bgjob-begin@@\nB\tboot\nO\tstopped\nJ\t/r/default/" + id + "\nM\t" + strings.TrimSuffix(string(meta), "\n") +
			"\nP\t\nX\t143\nS\tstop TERM\nL\t" + tt.live + "\tproc\n\n@@bgjob-end@@\n"
		c, err := NewClient(cannedRuntime{out: out}, "/r", "")
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := c.Stop(context.Background(), []string{id}, StopOptions{})
		if len(jobs) != 1 || jobs[0].Status != jobdir.StatusKilled {
			t.Fatalf("stop with %s processes left: %+v, %v; want the job killed", tt.live, jobs, err)
		}
		var be *Error
		if failed := errors.As(err, &be) && be.Kind == KindBusy && strings.Contains(err.Error(), tt.live+" of its processes"); failed != tt.fail {
			t.Errorf("stop with %s processes left: %v; want a busy error naming them: %v", tt.live, err, tt.fail)
		}
	}
}
