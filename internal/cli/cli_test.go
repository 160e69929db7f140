package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

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
