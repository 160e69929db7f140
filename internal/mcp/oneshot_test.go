package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// A one-shot client (a server a call, as the Inspector CLI) with a fixed
// reader reads each byte once: a server whose client closed its input
// cleanly after the result of a read moves the cursor over it. One whose
// input broke off (the client died) does not: those bytes come again.
func TestOneShotClientReadsEachByteOnce(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"printf 'one\\n'; read x; printf 'two\\n'"}, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() bool {
		var out bytes.Buffer
		_, err := c.Logs(ctx, j.ID, bgjob.LogOptions{Stdout: true}, &out, io.Discard)
		return err == nil && out.String() == "one\n"
	})
	o := mcp.Options{Root: root, Reader: "oneshot"}
	// read runs a server for one job_output call and ends its session, as
	// a one-shot client does (cleanly) or as one that dies does.
	read := func(clean bool) (string, *int64) {
		t.Helper()
		lc := serveLines(t, o)
		m := lc.call(1, "tools/call", fmt.Sprintf(`{"name":"job_output","arguments":{"id":%q,"stream":"stdout"}}`, j.ID))
		var res struct {
			StructuredContent job `json:"structuredContent"`
		}
		if err := json.Unmarshal(m["result"], &res); err != nil {
			t.Fatalf("job_output: %s (%v)", m, err)
		}
		if clean {
			lc.end()
		} else {
			lc.in.CloseWithError(errors.New("the client died"))
			select {
			case <-lc.done:
			case <-time.After(time.Minute):
				t.Fatal("the server did not end within a minute of its broken input")
			}
		}
		return res.StructuredContent.Text, res.StructuredContent.Next
	}
	if got, next := read(false); got != "one\n" || next == nil || *next != 4 {
		t.Fatalf("first read: %q, next_offset %v; want one and 4", got, next)
	}
	// The client died after the read: its bytes come again.
	if got, _ := read(true); got != "one\n" {
		t.Fatalf("read after a client that died: %q, want one again", got)
	}
	if got, next := read(true); got != "" || next == nil || *next != 4 {
		t.Fatalf("read after a clean end: %q, next_offset %v; want nothing new and 4", got, next)
	}
	if _, err := c.Send(ctx, j.ID, nil, bgjob.SendOptions{EOF: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(true); got != "two\n" {
		t.Fatalf("read of the rest: %q, want two", got)
	}
	if got, _ := read(true); got != "" {
		t.Fatalf("read after the rest: %q, want nothing", got)
	}
}

// A client that writes its requests and closes its input at once (printf
// '...' | bgjob mcp) gets an answer to every request it sent: the end of
// the input waits for the calls in flight. A job a job_start started is
// the session's all the same, and stopped at its end, after the answers.
func TestRequestsBeforeEOFAreAnswered(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	lc := startLines(t, mcp.Options{Root: root})
	input := initialize + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job_start","arguments":{"command":"sleep 600","wait_sec":0}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job_list","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n"
	if _, err := io.WriteString(lc.in, input); err != nil {
		t.Fatal(err)
	}
	lc.in.Close()
	answers := map[string]map[string]json.RawMessage{}
	for b := range lc.lines {
		m, err := wireMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		if m["method"] == nil {
			answers[string(m["id"])] = m
		}
	}
	if err := <-lc.done; err != nil {
		t.Fatalf("server: %v", err)
	}
	for _, id := range []string{`"init"`, "2", "3", "4"} {
		if answers[id]["result"] == nil {
			t.Errorf("request %s: answer %s, want a result", id, answers[id])
		}
	}
	var res struct {
		StructuredContent job `json:"structuredContent"`
	}
	if err := json.Unmarshal(answers["2"]["result"], &res); err != nil || res.StructuredContent.ID == "" {
		t.Fatalf("job_start: %s (%v)", answers["2"], err)
	}
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), res.StructuredContent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j := jobs[0]; j.Status != jobdir.StatusKilled || j.Reason != bgjob.ReasonSessionEnd {
		t.Errorf("the session's job after its end: %s (reason %q), want killed (session_end)", j.Status, j.Reason)
	}
}
