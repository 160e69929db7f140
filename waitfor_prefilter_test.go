package bgjob

import (
	"regexp"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestMayMatchScreenText: Go's look before the script's, on a PTY job,
// reads the text of the terminal's lines as the script does (bg_screen):
// escape sequences and CRs are not matched, so a prompt drawn in bold
// and an answer in colour may match; on another job only whole lines
// count, as they are.
func TestMayMatchScreenText(t *testing.T) {
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
		j := jobdirtest.Make(t, t.TempDir(), "default", jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{PTY: tc.pty}, Stdout: stream})
		q := &shellgen.WaitFor{Ref: j.Meta.ID, Pattern: tc.pattern}
		if got := mayMatch(j.Path, tc.pty, q, regexp.MustCompile("(?m)"+tc.pattern), func(string) {}); got != tc.want {
			t.Errorf("pty %v, %q: mayMatch = %v, want %v", tc.pty, tc.pattern, got, tc.want)
		}
	}
}
