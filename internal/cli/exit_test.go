package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// TestJobsExit: the one exit rule of wait, logs --follow and run --wait.
// Several jobs on one host: the first non-zero status; several hosts: the
// largest, with a line on stderr for each job that did not exit 0.
func TestJobsExit(t *testing.T) {
	exited := func(id string, code int) jobdir.Job {
		return jobdir.Job{Meta: jobdir.Meta{ID: id}, Status: jobdir.StatusExited, ExitCode: &code}
	}
	lost := jobdir.Job{Meta: jobdir.Meta{ID: "l"}, Status: jobdir.StatusLost}
	type result = bgjob.Result[[]jobdir.Job]
	timeout := &bgjob.Error{Kind: bgjob.KindTimeout, Host: "b", Err: fmt.Errorf("waiting 2s: %w", bgjob.ErrTimeout)}
	tests := []struct {
		name   string
		many   bool
		res    []result
		code   int
		stderr string
	}{
		{"one host, all 0", false, []result{{Value: []jobdir.Job{exited("a", 0), exited("b", 0)}}}, 0, ""},
		{"one host, the first non-zero", false, []result{{Value: []jobdir.Job{exited("a", 0), exited("b", 3), exited("c", 7)}}}, 3, ""},
		{"one host, lost after a failure", false, []result{{Value: []jobdir.Job{exited("a", 3), lost}}}, 3,
			"bgjob: job l was lost: it ended without recording an exit status\n"},
		{"one host, lost first", false, []result{{Value: []jobdir.Job{lost, exited("a", 3)}}}, 1,
			"bgjob: job l was lost: it ended without recording an exit status\n"},
		{"several hosts, the largest", true, []result{
			{Host: "a", Value: []jobdir.Job{exited("x", 3)}},
			{Host: "b", Value: []jobdir.Job{exited("x", 7)}},
			{Host: "c", Value: []jobdir.Job{exited("x", 0)}},
		}, 7, "bgjob: error: a: job x exited with status 3\nbgjob: error: b: job x exited with status 7\n"},
		{"several hosts, one timed out", true, []result{
			{Host: "a", Value: []jobdir.Job{exited("x", 3)}},
			{Host: "b", Err: timeout},
		}, exitTimeout, "bgjob: error: a: job x exited with status 3\nbgjob: error: b: waiting 2s: timed out\n"},
		{"several hosts, lost", true, []result{{Host: "a", Value: []jobdir.Job{lost}}}, 1,
			"bgjob: error: a: job l was lost: it ended without recording an exit status\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &app{stderr: &stderr, fanout: tt.many}
			err := jobsExit(a, tt.res)
			code := 0
			var ee *exitError
			if errors.As(err, &ee) {
				code = ee.code
			} else if err != nil {
				t.Fatalf("jobsExit: %v, want an exit status", err)
			}
			if code != tt.code || stderr.String() != tt.stderr {
				t.Errorf("jobsExit: exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}

// TestJobsExitOneHostError: one host's error is returned for Run to
// print, a timeout with wait's status, 124.
func TestJobsExitOneHostError(t *testing.T) {
	var stderr bytes.Buffer
	a := &app{stderr: &stderr}
	inner := fmt.Errorf("waiting 2s: %w", bgjob.ErrTimeout)
	err := jobsExit(a, []bgjob.Result[[]jobdir.Job]{{Err: &bgjob.Error{Kind: bgjob.KindTimeout, Err: inner}}})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitTimeout || err.Error() != "waiting 2s: timed out" || stderr.Len() != 0 {
		t.Errorf("jobsExit: %v (%T), stderr %q; want exit 124 with the host's own error", err, err, stderr.String())
	}
}

// TestInterruptIsTheAnswer: once bgjob is interrupted, what fails after
// the interrupt (here a command that fails without looking at its
// context) does not turn into an error message: exit 130, nothing said.
func TestInterruptIsTheAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"no-such-verb"}, strings.NewReader(""), &out, &errb); code != 130 || errb.Len() != 0 {
		t.Errorf("interrupted: exit %d, stderr %q; want 130 and nothing", code, errb.String())
	}
	// Without the interrupt the same call is a usage error.
	errb.Reset()
	if code := Run(context.Background(), []string{"no-such-verb"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("not interrupted: exit %d, want 2 (%s)", code, errb.String())
	}
}

// fullWriter fails every write, as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputLostIsAFailure: a verb whose output could not be written (a
// full disk, > /dev/full) fails, saying so; it exited 0.
func TestOutputLostIsAFailure(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	var out, errs bytes.Buffer
	if code := Run(ctx, []string{"--root", root, "run", "-q", "-n", "full", "--", "echo", "hi"}, strings.NewReader(""), &out, &errs); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs.String())
	}
	for _, args := range [][]string{
		{"run", "-q", "--", "true"},
		{"status", "full"},
		{"ls"},
		{"ls", "--json"},
		{"wait", "--json", "full"},
		{"logs", "full"},
		{"stop", "full"},
		{"prune", "--all", "--dry-run"},
	} {
		var errs bytes.Buffer
		code := Run(ctx, append([]string{"--root", root}, args...), strings.NewReader(""), fullWriter{}, &errs)
		if code == 0 || !strings.Contains(errs.String(), "bgjob: error: ") || !strings.Contains(errs.String(), "no space left") {
			t.Errorf("%v to a full disk: exit %d, stderr %q; want a failure that says why", args, code, errs.String())
		}
	}
}
