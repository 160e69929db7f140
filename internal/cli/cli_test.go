package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

func TestDurationText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1499 * time.Millisecond, "1s"},
		{59 * time.Second, "59s"},
		{3*time.Minute + 5*time.Second, "3m05s"},
		{2*time.Hour + 3*time.Minute + 59*time.Second, "2h03m"},
		{76 * time.Hour, "3d04h"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := durationText(tt.d); got != tt.want {
				t.Errorf("durationText(%s) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestEndText(t *testing.T) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	end := start.Add(12 * time.Second)
	three, kill := 3, 143
	tests := []struct {
		name string
		j    jobdir.Job
		want string
	}{
		{"exited", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusExited, ExitCode: &three, EndedAt: &end}, "exited 3 after 12s"},
		{"killed", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusKilled, ExitCode: &kill, Signal: "TERM", EndedAt: &end}, "killed (TERM) after 12s"},
		{"lost, no end time", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusLost}, "lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := endText(tt.j); got != tt.want {
				t.Errorf("endText = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestEndLinesOnlyOnATerminal: wait and logs --follow say how a job ended
// on stderr when a person watches stdout, and nothing when a program reads.
func TestEndLinesOnlyOnATerminal(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	end := start.Add(12 * time.Second)
	three := 3
	j := jobdir.Job{Meta: jobdir.Meta{ID: "20261130T100000-0k3f9q", StartedAt: start}, Status: jobdir.StatusExited, ExitCode: &three, EndedAt: &end}
	for _, tty := range []bool{true, false} {
		var stderr bytes.Buffer
		a := &app{stdout: io.Discard, stderr: &stderr, terminal: func(io.Writer) bool { return tty }}
		a.endLines([]jobdir.Job{j})
		want := ""
		if tty {
			want = "bgjob: job 20261130T100000-0k3f9q exited 3 after 12s\n"
		}
		if stderr.String() != want {
			t.Errorf("terminal %v: stderr %q, want %q", tty, stderr.String(), want)
		}
	}
}

func TestVersionText(t *testing.T) {
	v := versionText()
	if !strings.HasPrefix(v, "bgjob ") || !strings.Contains(v, "go1.") {
		t.Errorf("versionText() = %q, want bgjob VERSION (..., goX.Y)", v)
	}
}

func TestOwnerText(t *testing.T) {
	o := jobdir.Owner{Kind: jobdir.OwnerMCP, PID: 4242, Hostname: "laptop"}
	kept := o
	kept.Keep = true
	odd := o
	odd.Hostname = "a\x1bb"
	tests := []struct {
		name  string
		owner *jobdir.Owner
		here  string
		want  string
	}{
		{"none", nil, "laptop", "-"},
		{"this machine", &o, "laptop", "mcp:4242"},
		{"another machine", &o, "desktop", "mcp:4242@laptop"},
		{"kept", &kept, "laptop", "mcp:4242,keep"},
		{"a hostname with a control character", &odd, "laptop", `mcp:4242@a\x1bb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownerText(tt.owner, tt.here); got != tt.want {
				t.Errorf("ownerText(%+v, %q) = %q, want %q", tt.owner, tt.here, got, tt.want)
			}
		})
	}
}
