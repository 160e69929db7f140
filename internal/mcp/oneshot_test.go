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
