package mcp_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/internal/mcp"
)

// TestCursorHeldUntilNextCall: a read through job_output's cursor moves it
// only once the client has called again (so its result was written out):
// a server that died writing a result leaves its bytes to be read again,
// and the next call of the same server never repeats them. The read used
// to move the cursor before its result was written.
func TestCursorHeldUntilNextCall(t *testing.T) {
	root := t.TempDir()
	opts := mcp.Options{Root: root, Reader: "agent"}
	a := serve(t, opts)
	var st job
	call(t, a, "job_start", map[string]any{"command": "echo one", "name": "j", "wait_sec": 0}, &st)
	var w waited
	call(t, a, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	read := func(cs *sdk.ClientSession, ref string) string {
		t.Helper()
		var o job
		call(t, cs, "job_output", map[string]any{"id": ref, "stream": "stdout"}, &o)
		return o.Text
	}
	if got := read(a, "j"); got != "one\n" {
		t.Fatalf("first read %q, want one", got)
	}
	// Another server with the same cursor stands for A killed before it
	// wrote its result out: the bytes are still unread.
	if got := read(serve(t, opts), st.ID); got != "one\n" {
		t.Fatalf("a read after a result that may never have been written out: %q, want one again", got)
	}
	// A's next call (by id now) comes after its result: it moves the
	// cursor, and repeats nothing.
	if got := read(a, st.ID); got != "" {
		t.Fatalf("the same server's next read: %q, want nothing new", got)
	}
	if got := read(serve(t, opts), "j"); got != "" {
		t.Fatalf("a read after the cursor moved: %q, want nothing new", got)
	}
}

// TestCursorStartThenOutput: job_start's read holds the cursor like
// job_output's, and job_output by the job's name goes on after it.
func TestCursorStartThenOutput(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "echo early", "name": "e", "wait_sec": 10}, &st)
	if st.Output != "early\n" {
		t.Fatalf("job_start output %q, want early", st.Output)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": "e", "stream": "stdout"}, &o)
	if o.Text != "" {
		t.Errorf("job_output after job_start: %q, want nothing new", o.Text)
	}
}
