package e2e

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJobHoldsNoCallerDescriptor: a job does not inherit a descriptor
// its caller left open beyond stderr. A caller that passed bgjob a pipe
// (fd 3, as a harness or a parent's IPC channel does) sees the pipe's end
// once bgjob has returned, while the job runs on; the launch made in Go,
// the script's (a named job) and the script's forced alike.
func TestJobHoldsNoCallerDescriptor(t *testing.T) {
	bin := bgjobBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{name: "made in Go", args: []string{"run", "-q", "--", "sleep 30"}},
		{name: "named, the script's", args: []string{"run", "-q", "--name", "held", "--", "sleep 30"}},
		{name: "scripts forced", args: []string{"run", "-q", "--", "sleep 30"}, env: []string{"BGJOB_NATIVE_CHECK=off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command(bin, append([]string{"--root", root}, tt.args...)...)
			cmd.Env = append(os.Environ(), tt.env...)
			cmd.ExtraFiles = []*os.File{w}
			out, err := cmd.Output()
			w.Close()
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			id := strings.TrimSpace(string(out))
			defer exec.Command(bin, "--root", root, "stop", id).Run()
			r.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(r); err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("job %s holds the caller's fd 3: no end of the pipe while it runs", id)
				}
				t.Fatal(err)
			}
			st, err := exec.Command(bin, "--root", root, "status", "--json", id).Output()
			if err != nil || !strings.Contains(string(st), `"status":"running"`) {
				t.Fatalf("job %s is not running: %s %v", id, st, err)
			}
		})
	}
}
