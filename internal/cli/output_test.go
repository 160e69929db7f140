package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// writeCounter counts the writes made to it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestColumnsWriteOnce: a job's status and a table of jobs reach their
// writer in one write each (tabwriter alone writes every cell and every
// run of padding apart), aligned as before.
func TestColumnsWriteOnce(t *testing.T) {
	code := 0
	ended := time.Date(2026, 12, 4, 20, 5, 14, 0, time.UTC)
	j := jobdir.Job{
		Meta: jobdir.Meta{
			ID: "20261204T200514-inlirx", Workspace: "default", Command: "seq 1 1000",
			Cwd: "/tmp", PID: 5373, StartedAt: ended.Add(-time.Second),
		},
		Status: jobdir.StatusExited, ExitCode: &code, EndedAt: &ended,
		StdoutPath: "/tmp/x/stdout.log", StderrPath: "/tmp/x/stderr.log",
	}
	t.Setenv("TZ", "UTC")
	var w writeCounter
	printJob(&w, j)
	if w.writes != 1 {
		t.Errorf("printJob made %d writes, want 1", w.writes)
	}
	want := strings.Join([]string{
		"id:         20261204T200514-inlirx",
		"workspace:  default",
		"status:     exited",
		"exit_code:  0",
		"pid:        5373",
		"command:    seq 1 1000",
		"cwd:        /tmp",
	}, "\n") + "\n"
	if got := w.String(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "stdout:     /tmp/x/stdout.log\nstderr:     /tmp/x/stderr.log\n") {
		t.Errorf("printJob printed\n%s\nwant it to start with\n%s", got, want)
	}

	w = writeCounter{}
	tb := newTable(&w, false, false)
	tb.row(j)
	tb.row(j)
	if w.writes != 0 {
		t.Errorf("the table wrote %d times before its flush", w.writes)
	}
	tb.flush()
	if w.writes != 1 {
		t.Errorf("the table's flush made %d writes, want 1", w.writes)
	}
	if lines := strings.Split(w.String(), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "ID                      STATUS") {
		t.Errorf("the table printed\n%s", w.String())
	}
}

// TestStatusPortsLabels: status says a job's ports and labels as issue 46
// spells them: "ports: 8000/tcp (0.0.0.0), 9229/tcp (127.0.0.1)", and
// "labels: KEY=VALUE, ..." by key.
func TestStatusPortsLabels(t *testing.T) {
	j := jobdir.Job{
		Meta: jobdir.Meta{
			ID: "20261207T010000-aaaaaa", Workspace: "default", Command: "npm run dev", Port: 8000,
			Labels: map[string]string{"wt": "feat-x", "agent": "b"},
		},
		Status: jobdir.StatusRunning, LiveProcesses: 2,
		Ports: []jobdir.Port{{Port: 8000, Proto: "tcp", Address: "0.0.0.0"}, {Port: 9229, Proto: "tcp", Address: "127.0.0.1"}},
	}
	var b bytes.Buffer
	printJob(&b, j)
	for _, want := range []string{
		"\nport:           8000\n",
		"\nports:          8000/tcp (0.0.0.0), 9229/tcp (127.0.0.1)\n",
		"\nlabels:         agent=b, wt=feat-x\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status printed\n%s\nwithout %q", b.String(), want)
		}
	}
}
