package mcp_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
)

// job_output with an offset past the end of the log says so, and the
// log's size: a running job's read waits at the offset (as logs --offset
// does), an ended job's is pulled back to the end; neither is silent.
// An offset at the end is no such thing.
func TestOutputOffsetPastEnd(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	running, err := c.Run(ctx, bgjob.Spec{Argv: []string{"printf abcdefg; sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	ended, err := c.Run(ctx, bgjob.Spec{Argv: []string{"printf abcdefg"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{ended.ID}, bgjob.WaitOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() bool {
		var out bytes.Buffer
		_, err := c.Logs(ctx, running.ID, bgjob.LogOptions{Stdout: true}, &out, io.Discard)
		return err == nil && out.String() == "abcdefg"
	})
	type read struct {
		Text    string `json:"text"`
		Next    *int64 `json:"next_offset"`
		LogSize *int64 `json:"log_size"`
	}
	const far = int64(1e12)
	for _, tc := range []struct {
		name, id string
		offset   int64
		next     int64
		past     bool
	}{
		{"running, past the end", running.ID, far, far, true},
		{"ended, past the end", ended.ID, far, 7, true},
		{"running, at the end", running.ID, 7, 7, false},
		{"ended, at the end", ended.ID, 7, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r read
			res := call(t, cs, "job_output", map[string]any{"id": tc.id, "stream": "stdout", "offset": tc.offset}, &r)
			if r.Next == nil || *r.Next != tc.next {
				t.Errorf("next_offset %v, want %d", r.Next, tc.next)
			}
			said := strings.Contains(text(res), "past the end")
			if tc.past && (!said || !strings.Contains(text(res), "7 bytes") || r.LogSize == nil || *r.LogSize != 7) {
				t.Errorf("result %q, log_size %v: want it to say the offset is past the end of the log, 7 bytes", text(res), r.LogSize)
			}
			if !tc.past && (said || r.LogSize != nil) {
				t.Errorf("result %q, log_size %v: an offset at the end is not past it", text(res), r.LogSize)
			}
			if r.Text != "" {
				t.Errorf("text %q, want none", r.Text)
			}
		})
	}
}
