package bgjob

import (
	"context"
	"regexp"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
	"github.com/bgjob/bgjob/shellgen"
)

// TestMayMatchScreenText: Go's look before the script's, on a PTY job,
// reads the text of the terminal's lines as the script does (bg_screen):
// escape sequences and CRs are not matched, so a prompt drawn in bold
// and an answer in colour may match; on another job only whole lines
// count, as they are. A job that has ended is the script's to look at.
func TestMayMatchScreenText(t *testing.T) {
	root := t.TempDir()
	c, err := NewClient(local.New(), root, "", WithAutoPrune(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const stream = "\x1b]0;repl\x07\x1b[1m>>>\x1b[0m 6*7\r\n\x1b[32m42\x1b[0m\r\n\x1b[1m>>>\x1b[0m "
	for _, tc := range []struct {
		pty     bool
		pattern string
		want    bool
	}{
		{true, `^>>> 6\*7$`, true},
		{true, `^42$`, true},
		{true, `^>>> $`, true},
		{true, `repl`, false},
		{true, `^43`, false},
		{false, `^42$`, false},
		{false, "\x1b\\[32m42", true},
		{false, `>>> $`, false},
	} {
		for _, state := range []jobdirtest.State{jobdirtest.Running, jobdirtest.Exited} {
			j := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: state, Meta: jobdir.Meta{PTY: tc.pty}, Stdout: stream})
			q := &shellgen.WaitFor{Ref: j.Meta.ID, Pattern: tc.pattern}
			want := tc.want || state == jobdirtest.Exited
			if got := c.mayMatch(ctx, tc.pty, q, regexp.MustCompile("(?m)"+tc.pattern), func(string) {}); got != want {
				t.Errorf("pty %v, %q, state %v: mayMatch = %v, want %v", tc.pty, tc.pattern, state, got, want)
			}
		}
	}
}
