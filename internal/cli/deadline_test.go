package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
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
			cmd := a.rootCommand("")
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

// TestNoAnswerSaid: a host that does not answer within --host-timeout is
// named once, with the limit and the flag, whether it is this machine,
// the one host of -H, or one of several; the error keeps its kind.
func TestNoAnswerSaid(t *testing.T) {
	silent := func(ctx context.Context, _ string) (*bgjob.Client, func(), error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	for _, tc := range []struct {
		name        string
		host        string
		hosts       []string
		err, stderr string
	}{
		{"this machine", "", nil, "no answer within 50ms (--host-timeout)", ""},
		{"one host", "web1", nil, "web1: no answer within 50ms (--host-timeout)", ""},
		{"several hosts", "", []string{"web1", "web2"}, "exit status 1",
			"bgjob: error: web1: no answer within 50ms (--host-timeout)\nbgjob: error: web2: no answer within 50ms (--host-timeout)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			a := &app{stderr: &stderr, host: tc.host, hosts: tc.hosts, fanout: len(tc.hosts) > 1, parallel: 2}
			res := bgjob.Each(context.Background(), a.fleetVia(50*time.Millisecond, silent), func(context.Context, string, *bgjob.Client) (int, error) {
				return 0, nil
			})
			err := failures(a, res)
			if err == nil || err.Error() != tc.err || stderr.String() != tc.stderr {
				t.Fatalf("error %v, stderr %q; want %q, %q", err, stderr.String(), tc.err, tc.stderr)
			}
			if !a.many() && bgjob.KindOf(err) != bgjob.KindNoAnswer {
				t.Errorf("kind %q, want no_answer", bgjob.KindOf(err))
			}
		})
	}
}
