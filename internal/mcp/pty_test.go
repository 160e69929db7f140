package mcp_test

import (
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// TestUntilOutputPTY: on a pty job, job_wait's until_output matches the
// text of the terminal's lines, as a person at the terminal sees them: the
// terminal echoes the line sent, so the answer starts a line of its own
// (^42), and escape sequences are not matched (^>>> $ finds a prompt drawn
// in bold). Locally and over SSH.
func TestUntilOutputPTY(t *testing.T) {
	_, _, dial, _ := sshHost(t)
	for _, tc := range []struct {
		name string
		o    mcp.Options
	}{
		{"local", mcp.Options{}},
		{"ssh", mcp.Options{Dial: dial, Host: "bgjob-test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := serve(t, tc.o)
			var st job
			call(t, cs, "job_start", map[string]any{"command": `while printf '\033[1m>>>\033[0m '; read -r l; do echo "$((l))"; done`, "pty": true, "wait_sec": 0}, &st)
			var w waited
			call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^>>> $", "timeout_sec": 30}, &w)
			if w.Matched != ">>> " {
				t.Fatalf("job_wait until_output ^>>> $: %+v, want the prompt", w)
			}
			var sent job
			call(t, cs, "job_send", map[string]any{"id": st.ID, "data": "6*7\n"}, &sent)
			call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^42$", "timeout_sec": 30}, &w)
			if w.Matched != "42" {
				t.Fatalf("job_wait until_output ^42$: %+v, want 42", w)
			}
			call(t, cs, "job_send", map[string]any{"id": st.ID, "eof": true}, &sent)
			call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "timeout_sec": 30}, &w)
			if len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited {
				t.Fatalf("job_wait after send eof: %+v, want exited", w)
			}
			var o job
			call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start"}, &o)
			if !strings.HasPrefix(o.Text, ">>> 6*7\n42\n>>> ") {
				t.Errorf("job_output: %q, want the line typed, then 42", o.Text)
			}
		})
	}
}
