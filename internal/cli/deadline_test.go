package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHostTimeoutFlag: --host-timeout and BGJOB_HOST_TIMEOUT set the
// deadline of the verbs that do not wait; a value that is not a duration,
// or is negative, is a usage error (exit status 2).
func TestHostTimeoutFlag(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
		code int
		want time.Duration
		err  string
	}{
		{"default", "", nil, 0, 30 * time.Second, ""},
		{"env", "2s", nil, 0, 2 * time.Second, ""},
		{"flag over env", "2s", []string{"--host-timeout", "5s"}, 0, 5 * time.Second, ""},
		{"off", "0", nil, 0, 0, ""},
		{"env not a duration", "soon", nil, 2, 0, "BGJOB_HOST_TIMEOUT=soon"},
		{"negative", "", []string{"--host-timeout", "-1s"}, 2, 0, "--host-timeout must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BGJOB_HOST_TIMEOUT", tt.env)
			t.Setenv("BGJOB_HOST", "")
			a := &app{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &strings.Builder{}, terminal: isTerminal}
			cmd := a.rootCommand()
			cmd.SetArgs(append(append([]string{"--root", t.TempDir()}, tt.args...), "ls"))
			err := cmd.ExecuteContext(context.Background())
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("ls: %v", err)
			case tt.code == 0 && a.hostTimeout != tt.want:
				t.Errorf("host timeout %v, want %v", a.hostTimeout, tt.want)
			case tt.code != 0:
				ee, ok := err.(*exitError)
				if !ok || ee.code != tt.code || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want exit %d with %q", err, tt.code, tt.err)
				}
			}
		})
	}
}
