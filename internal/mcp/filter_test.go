package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// filteredReads reads the output of job id with filter and max_bytes max
// until a read is not cut, through the cursor or by offset (mode), and
// returns what each read showed (its text without the notice). Every read
// cut to the cap must show something or move on: else an agent that calls
// again as the notice says loops for ever.
func filteredReads(t *testing.T, cs *sdk.ClientSession, id, mode, filter string, max int) []string {
	t.Helper()
	var shown []string
	off := int64(0)
	for reads := 0; ; reads++ {
		if reads == 40 {
			t.Fatalf("max_bytes %d, %s: 40 filtered reads did not reach the end; they showed %q", max, mode, shown)
		}
		args := map[string]any{"id": id, "stream": "stdout", "filter": filter, "max_bytes": max}
		if mode == "offset" {
			args["offset"] = off
		}
		var o job
		call(t, cs, "job_output", args, &o)
		data, notice, cut := strings.Cut(o.Text, "\n[")
		if cut != o.Trunc {
			t.Fatalf("max_bytes %d, %s: text %q has a notice %v, truncated %v", max, mode, o.Text, cut, o.Trunc)
		}
		if o.Next == nil {
			t.Fatalf("max_bytes %d, %s: no next_offset in %+v", max, mode, o)
		}
		moved := *o.Next != off
		off = *o.Next
		if !o.Trunc {
			if data != "" {
				shown = append(shown, data)
			}
			return shown
		}
		if data == "" && !moved {
			t.Fatalf("max_bytes %d, %s: a read cut to the cap showed nothing and stayed at offset %d (%q): no read ever gets on", max, mode, off, notice)
		}
		if data != "" {
			shown = append(shown, data)
		}
	}
}

// startDone starts command and waits for it to exit.
func startDone(t *testing.T, cs *sdk.ClientSession, command string) string {
	t.Helper()
	var st job
	call(t, cs, "job_start", map[string]any{"command": command, "wait_sec": 0}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited {
		t.Fatalf("job_wait: %+v, want the job exited", w)
	}
	return st.ID
}

// A filtered read at max_bytes 1 gets on, a character at a time, as an
// unfiltered one does (TestMaxBytesBelowACharacter): it once read one byte
// of a line, could not judge it, and said "call again" from offset 0 for
// ever.
func TestFilterMaxBytesOneGetsOn(t *testing.T) {
	cs := serve(t, mcp.Options{})
	id := startDone(t, cs, "echo abcdef; echo ghij")
	for _, mode := range []string{"cursor", "offset"} {
		shown := filteredReads(t, cs, id, mode, ".", 1)
		// A line longer than the cap is judged a cap's worth at a time:
		// here a character at a time, and the newline, judged alone as an
		// empty line, does not match ".".
		if got := strings.Join(shown, ""); got != "abcdefghij" {
			t.Errorf("%s: filtered reads at max_bytes 1 showed %q, want every letter once", mode, shown)
		}
		for _, s := range shown {
			if len(s) > 1 {
				t.Errorf("%s: a read at max_bytes 1 showed %q", mode, s)
			}
		}
	}
}

// A filtered read moves over the log bytes whose text it shows, no
// further: a byte escaped as \xNN (four bytes of text for one of log)
// once used up the cap, and the bytes read with it were passed unseen.
// The reads show what unfiltered ones show.
func TestFilterCapCountsTheTextShown(t *testing.T) {
	cs := serve(t, mcp.Options{})
	for _, tc := range []struct {
		command string
		max     int
		want    []string
	}{
		{`printf 'x\377abcdefgh\n'`, 4, []string{"x", `\xff`, "abcd", "efgh"}},
		{`printf '\360\237\230\200\377ab\n'`, 3, []string{"😀", `\xff`, "ab\n"}},
		{`printf '\360\237\230\200\377ab\n'`, 4, []string{"😀", `\xff`, "ab\n"}},
		// A read at the cap backed off to a character boundary holds less
		// than half the cap: it is judged all the same, else the reads
		// stay there.
		{`printf '0\360\235\204\236\n'`, 4, []string{"0", "𝄞"}},
	} {
		id := startDone(t, cs, tc.command)
		for _, mode := range []string{"cursor", "offset"} {
			shown := filteredReads(t, cs, id, mode, ".", tc.max)
			if fmt.Sprint(shown) != fmt.Sprint(tc.want) {
				t.Errorf("%s, max_bytes %d, %s: reads showed %q, want %q", tc.command, tc.max, mode, shown, tc.want)
			}
		}
	}
}

// The notice of a cut says "byte" for one, and stands on a line of its
// own right after the text: a blank line before it only when the text
// ends a line.
func TestFilterCutNotice(t *testing.T) {
	cs := serve(t, mcp.Options{})
	id := startDone(t, cs, "echo ab; echo cd")
	var o job
	call(t, cs, "job_output", map[string]any{"id": id, "stream": "stdout", "filter": ".", "max_bytes": 1}, &o)
	if want := "a\n[stdout cut to the cap of 1 byte at offset 1: 5 bytes after it are not shown; call job_output again with the same filter for the next part]\n"; o.Text != want {
		t.Errorf("max_bytes 1: %q, want %q", o.Text, want)
	}
	call(t, cs, "job_output", map[string]any{"id": id, "stream": "stdout", "filter": ".", "since": "start", "max_bytes": 4}, &o)
	if want := "ab\n\n[stdout cut to the cap of 4 bytes at offset 3: 3 bytes after it are not shown; read on with the same filter, offset 3 and stream \"stdout\"]\n"; o.Text != want {
		t.Errorf("max_bytes 4: %q, want %q", o.Text, want)
	}
}

// With both streams each part is framed and ended with a newline; a
// notice after a part that did not end a line stands right after it, with
// no blank line, as after a single stream's text.
func TestCutNoticeAfterBothStreams(t *testing.T) {
	cs := serve(t, mcp.Options{})
	id := startDone(t, cs, "printf a; printf cd >&2")
	var o job
	call(t, cs, "job_output", map[string]any{"id": id, "max_bytes": 2}, &o)
	if want := "--- stdout ---\na\n--- stderr ---\nc\n[stderr cut to the cap of 2 bytes at offset 1: 1 byte after it is not shown; call job_output again for the next part, or read on with offset 1 and stream \"stderr\"]\n"; o.Text != want {
		t.Errorf("both streams, max_bytes 2: %q, want %q", o.Text, want)
	}
	id = startDone(t, cs, "echo a; echo cd >&2")
	call(t, cs, "job_output", map[string]any{"id": id, "filter": ".", "max_bytes": 3}, &o)
	if want := "a\n\n[stderr cut to the cap of 3 bytes at offset 0: 3 bytes after it are not shown; call job_output again with the same filter for the next part]\n"; o.Text != want {
		t.Errorf("both streams, filter, max_bytes 3: %q, want %q", o.Text, want)
	}
}

// A matching line of stderr that fits a cap but not what stdout left of it
// (the cap is of both streams together) waits whole for the next read: it
// was judged in pieces there, and its rest did not match and was never
// shown.
func TestFilterLineWaitsForTheOtherStream(t *testing.T) {
	cs := serve(t, mcp.Options{})
	id := startDone(t, cs, "echo ab; echo wxyz >&2")
	var got strings.Builder
	for range 5 {
		var o job
		call(t, cs, "job_output", map[string]any{"id": id, "filter": "^(a|w)", "max_bytes": 5}, &o)
		data, _, _ := strings.Cut(o.Text, "\n[")
		got.WriteString(data)
		if !o.Trunc {
			break
		}
	}
	if !strings.Contains(got.String(), "ab\n") || !strings.Contains(got.String(), "wxyz\n") {
		t.Errorf("filtered reads of both streams at max_bytes 5 showed %q, want ab and wxyz", got.String())
	}
}
