package mcp_test

import (
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/mcp"
)

// A stray OSC opener (a title never terminated) hides at most the rest of
// its line from the text a model gets: job_start, job_output and job_wait
// all show the error at the end of the output.
func TestStrayStringOpener(t *testing.T) {
	cs := serve(t, mcp.Options{})
	cmd := `printf 'before\n\033]0;stray '; seq 1 3000; echo 'ERROR: build failed'; exit 1`
	var st job
	call(t, cs, "job_start", map[string]any{"command": cmd, "wait_sec": 120}, &st)
	if exitCode(st) != 1 {
		t.Fatalf("job_start: %+v, want the job ended with 1", st)
	}
	if !strings.Contains(st.Output, "ERROR: build failed") || !strings.Contains(st.Output, "\n2\n3\n") {
		t.Errorf("job_start output %q..., want the lines after the stray opener", st.Output[:min(len(st.Output), 200)])
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 0}, &o)
	if !strings.Contains(o.Text, "ERROR: build failed") {
		t.Errorf("job_output from 0: %q..., want the error line", o.Text[:min(len(o.Text), 200)])
	}
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if len(w.Jobs) != 1 || !strings.Contains(w.Jobs[0].Tail, "ERROR: build failed") {
		t.Errorf("job_wait: %+v, want the error line in the tail", w)
	}
}
