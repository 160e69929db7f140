package shellgen_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// event is one thing a Handler received, with its data read.
type event struct {
	Job      *jobdir.Observation
	Outcome  string
	Err      *refErr
	Removed  string
	TimedOut bool
	Data     *string
	Stream   string
	Offset   int64
}

// refErr is a refusal a Handler received.
type refErr struct{ Kind, Subject string }

func (e *refErr) Error() string { return e.Kind + ": " + e.Subject }

// streamEvent is one thing a Handler received, its data unread.
type streamEvent struct {
	Job      *jobdir.Observation
	Outcome  string
	Err      *refErr
	Removed  string
	TimedOut bool
	Data     io.Reader
	Stream   string
	Offset   int64
}

// decodeEvents decodes a script's output with a records.Handler that hands
// each thing it receives to fn, in order.
func decodeEvents(r io.Reader, fn func(streamEvent) error) error {
	var werr error
	_, err := records.Handler{
		Job:     func(o jobdir.Observation, out string) error { return fn(streamEvent{Job: &o, Outcome: out}) },
		Refused: func(k, s string) error { return fn(streamEvent{Err: &refErr{k, s}}) },
		Removed: func(d string) error { return fn(streamEvent{Removed: d}) },
		Wait: func(s string) {
			if s == "timeout" && werr == nil {
				werr = fn(streamEvent{TimedOut: true})
			}
		},
		Data: func(st string, off int64, r io.Reader) error {
			return fn(streamEvent{Data: r, Stream: st, Offset: off})
		},
	}.Decode(r)
	if err == nil {
		err = werr
	}
	return err
}

// dataRecord is a D record of an ended job's log announcing data from
// offset, then the data.
func dataRecord(stream string, offset int, data string) string {
	return fmt.Sprintf("D\t%s\t%d\t%d\t0\n%s", stream, offset, len(data), data)
}

func strp(s string) *string { return &s }

// decodeAll decodes out, reading all data, and returns the events.
func decodeAll(out io.Reader) ([]event, error) {
	var evs []event
	err := decodeEvents(out, func(ev streamEvent) error {
		e := event{Job: ev.Job, Outcome: ev.Outcome, Err: ev.Err, Removed: ev.Removed, TimedOut: ev.TimedOut}
		if ev.Data != nil {
			b, err := io.ReadAll(ev.Data)
			if err != nil {
				return err
			}
			e.Data = strp(string(b))
			e.Stream, e.Offset = ev.Stream, ev.Offset
		}
		evs = append(evs, e)
		return nil
	})
	return evs, err
}

// framed is what a script prints around its records.
func framed(records string) string {
	return "\n" + shellgen.BeginMarker + "\n" + records + "\n" + shellgen.EndMarker + "\n"
}

const meta1 = `{"version":1,"id":"20261130T001502-aaaaaa","pid":10,"proc_start":"55","boot_id":"b1"}`

func TestDecode(t *testing.T) {
	big := make([]byte, 300<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	tests := []struct {
		name string
		out  string
		want []event
	}{
		{
			name: "nothing to report",
			out:  framed("B\tb1\n"),
		},
		{
			name: "banner before the begin marker is ignored",
			out: "Welcome!\nJ\t/fake\nE\tnotfound\tfake\n" + shellgen.EndMarker + "\nmotd without newline" +
				framed("B\tb1\nJ\t/r/w/1\n"),
			want: []event{{Job: &jobdir.Observation{Dir: "/r/w/1", BootID: "b1"}}},
		},
		{
			name: "begin marker that is not a whole line is banner",
			out:  "x" + shellgen.BeginMarker + "\nJ\t/fake\n" + framed("J\t/r/w/1\n"),
			want: []event{{Job: &jobdir.Observation{Dir: "/r/w/1"}}},
		},
		{
			name: "records grouped into jobs",
			out: framed("B\tb1\n" +
				"J\t/r/w/1\nM\t" + meta1 + "\nP\t55\nX\t143\nT\t2026-11-30T00:20:00Z\nS\tstop TERM\n" +
				"J\t/r/w/2\nM\t{}\nP\t\n" +
				"J\t/r/w/3\n"),
			want: []event{
				{Job: &jobdir.Observation{Dir: "/r/w/1", Meta: meta1, HasMeta: true, ProcStart: "55", ExitCode: "143", HasExit: true,
					EndedAt: "2026-11-30T00:20:00Z", Stop: "stop TERM", BootID: "b1"}},
				{Job: &jobdir.Observation{Dir: "/r/w/2", Meta: "{}", HasMeta: true, BootID: "b1"}},
				{Job: &jobdir.Observation{Dir: "/r/w/3", BootID: "b1"}},
			},
		},
		{
			name: "empty exit_code and meta.json lines are still present",
			out:  framed("J\t/r/w/1\nM\t\nX\t\n"),
			want: []event{{Job: &jobdir.Observation{Dir: "/r/w/1", HasMeta: true, HasExit: true}}},
		},
		{
			name: "outcome attaches to the following job",
			out: framed("B\tb1\n" +
				"O\tstopped\nJ\t/r/w/1\nX\t143\n" +
				"O\tgone\nJ\t/r/w/2\n" +
				"J\t/r/w/3\n" +
				"O\tuntied\nJ\t/r/w/4\n"),
			want: []event{
				{Job: &jobdir.Observation{Dir: "/r/w/1", ExitCode: "143", HasExit: true, BootID: "b1"}, Outcome: "stopped"},
				{Job: &jobdir.Observation{Dir: "/r/w/2", BootID: "b1"}, Outcome: "gone"},
				{Job: &jobdir.Observation{Dir: "/r/w/3", BootID: "b1"}},
				{Job: &jobdir.Observation{Dir: "/r/w/4", BootID: "b1"}, Outcome: "untied"},
			},
		},
		{
			name: "a held or replaced job of the same name, then the launched one",
			out: framed("B\tb1\n" +
				"H\treplaced\t/r/w/1\nJ\t/r/w/1\nX\t137\n" +
				"H\theld\t/r/w/2\nJ\t/r/w/2\n" +
				"H\treplaced\t/r/w/gone\n" + // removed meanwhile: no observation
				"J\t/r/w/3\n"),
			want: []event{
				{Job: &jobdir.Observation{Dir: "/r/w/1", ExitCode: "137", HasExit: true, BootID: "b1"}, Outcome: records.OutcomeReplaced},
				{Job: &jobdir.Observation{Dir: "/r/w/2", BootID: "b1"}, Outcome: records.OutcomeHeld},
				{Job: &jobdir.Observation{Dir: "/r/w/3", BootID: "b1"}},
			},
		},
		{
			name: "errors, removals and timeouts in order",
			out: framed("J\t/r/w/1\n" +
				"E\tnotfound\tbuild\n" +
				"R\t/r/w/2\n" +
				"E\tcwd\tworking directory /a\tb does not exist\n" +
				"W\ttimeout\n" +
				"J\t/r/w/3\n"),
			want: []event{
				{Job: &jobdir.Observation{Dir: "/r/w/1"}},
				{Err: &refErr{Kind: "notfound", Subject: "build"}},
				{Removed: "/r/w/2"},
				{Err: &refErr{Kind: "cwd", Subject: "working directory /a\tb does not exist"}},
				{TimedOut: true},
				{Job: &jobdir.Observation{Dir: "/r/w/3"}},
			},
		},
		{
			name: "error record ends the script",
			out:  "\n" + shellgen.BeginMarker + "\nB\tb\nE\troot\troot /x is a symbolic link\n\n" + shellgen.EndMarker + "\n",
			want: []event{{Err: &refErr{Kind: "root", Subject: "root /x is a symbolic link"}}},
		},
	}
	data := []struct{ name, data string }{
		{"lines", "hello\nworld\n"},
		{"no trailing newline", "no newline"},
		{"empty", ""},
		{"one newline", "\n"},
		{"blank lines", "\n\n\n"},
		{"end marker in the middle", "a\n" + shellgen.EndMarker + "\nb\n"},
		{"end marker line first", shellgen.EndMarker + "\nrest"},
		{"end marker without newline at the end", "a\n" + shellgen.EndMarker},
		{"end marker line at the end", "a\n" + shellgen.EndMarker + "\n"},
		{"records and markers", "J\t/x\nE\tnotfound\tx\n" + shellgen.BeginMarker + "\n"},
		{"all bytes", "\x00" + allBytes()},
		{"300 KiB of random bytes", string(big)},
	}
	for _, d := range data {
		tests = append(tests, struct {
			name string
			out  string
			want []event
		}{
			name: "data/" + d.name,
			out: "\n" + shellgen.BeginMarker + "\nB\tb1\nJ\t/r/w/1\n" + dataRecord("stdout", 7, d.data) +
				dataRecord("stderr", 0, d.data) + "J\t/r/w/1\n\n" + shellgen.EndMarker + "\n",
			want: []event{
				{Job: &jobdir.Observation{Dir: "/r/w/1", BootID: "b1"}},
				{Data: strp(d.data), Stream: "stdout", Offset: 7},
				{Data: strp(d.data), Stream: "stderr"},
				{Job: &jobdir.Observation{Dir: "/r/w/1", BootID: "b1"}},
			},
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.out)},
				{"in halves", iotest.HalfReader(strings.NewReader(tt.out))},
			}
			if len(tt.out) < 4096 {
				readers = append(readers, struct {
					name string
					r    io.Reader
				}{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.out))})
			}
			for _, rd := range readers {
				got, err := decodeAll(rd.r)
				if err != nil {
					t.Fatalf("%s: Decode: %v", rd.name, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: events mismatch (-want +got):\n%s", rd.name, diff)
				}
			}
		})
	}
}

func TestDecodeTruncated(t *testing.T) {
	tests := []struct{ name, out string }{
		{"empty", ""},
		{"banner only", "Welcome!\n"},
		{"begin marker without newline", shellgen.BeginMarker},
		{"no end marker", "\n" + shellgen.BeginMarker + "\nB\tb\nJ\t/r/w/1\nM\t{}\n"},
		{"cut inside a record", "\n" + shellgen.BeginMarker + "\nB\tb\nJ\t/r/w/1\nM\t{\"id"},
		{"end marker without newline", "\n" + shellgen.BeginMarker + "\nB\tb\n\n" + shellgen.EndMarker},
		{"data without end marker", "\n" + shellgen.BeginMarker + "\n" + dataRecord("stdout", 0, "some data\n")},
		{"data shorter than announced", "\n" + shellgen.BeginMarker + "\nD\tstdout\t0\t100\t0\nsome data\n"},
		{"data end marker without newline", "\n" + shellgen.BeginMarker + "\n" + dataRecord("stdout", 0, "some data\n") + shellgen.EndMarker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeAll(strings.NewReader(tt.out)); !errors.Is(err, records.ErrTruncated) {
				t.Errorf("Decode (reading data) = %v, want ErrTruncated", err)
			}
			// A callback that leaves the data unread gets the same answer.
			err := decodeEvents(strings.NewReader(tt.out), func(streamEvent) error { return nil })
			if !errors.Is(err, records.ErrTruncated) {
				t.Errorf("Decode (ignoring data) = %v, want ErrTruncated", err)
			}
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	tests := []struct{ name, out string }{
		{"unknown record", framed("J\t/r/w/1\ni\tzzz\n")},
		{"meta outside a job", framed("M\t{}\n")},
		{"exit code outside a job", framed("B\tb\nX\t0\n")},
		{"proc start after an error", framed("J\t/r/w/1\nE\tnotfound\tx\nP\t1\n")},
		{"stop marker after an outcome", framed("O\tstopped\nS\tstop TERM\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeEvents(strings.NewReader(tt.out), func(streamEvent) error { return nil })
			if err == nil || errors.Is(err, records.ErrTruncated) {
				t.Errorf("Decode = %v, want an error about the malformed output", err)
			}
		})
	}
}

func TestDecodeCallbackErrors(t *testing.T) {
	errBoom := errors.New("boom")
	out := framed("B\tb\nJ\t/r/w/1\nJ\t/r/w/2\nE\tnotfound\tx\nJ\t/r/w/3\n")
	dataOut := "\n" + shellgen.BeginMarker + "\n" + dataRecord("stdout", 0, strings.Repeat("data\n", 100000)) + "\n" + shellgen.EndMarker + "\n"
	tests := []struct {
		name    string
		out     string
		stopAt  int // the call that returns ret
		ret     error
		calls   int
		wantErr error
	}{
		{"ErrStop at the first job", out, 1, records.ErrStop, 1, nil},
		{"ErrStop at the error record", out, 3, records.ErrStop, 3, nil},
		{"ErrStop at the last job", out, 4, records.ErrStop, 4, nil},
		{"wrapped ErrStop", out, 2, errors.Join(records.ErrStop), 2, nil},
		{"other error at the first job", out, 1, errBoom, 1, errBoom},
		{"other error at the last job", out, 4, errBoom, 4, errBoom},
		{"ErrStop while data is unread", dataOut, 1, records.ErrStop, 1, nil},
		{"other error while data is unread", dataOut, 1, errBoom, 1, errBoom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := decodeEvents(strings.NewReader(tt.out), func(streamEvent) error {
				calls++
				if calls == tt.stopAt {
					return tt.ret
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Decode = %v, want %v", err, tt.wantErr)
			}
			if calls != tt.calls {
				t.Errorf("callback called %d times, want %d", calls, tt.calls)
			}
		})
	}
}

// TestDecodeDataPartialReads reads data in small pieces.
func TestDecodeDataPartialReads(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 10000)
	out := "\n" + shellgen.BeginMarker + "\n" + dataRecord("stdout", 0, string(payload)) + "\n" + shellgen.EndMarker + "\n"
	var got []byte
	err := decodeEvents(strings.NewReader(out), func(ev streamEvent) error {
		buf := make([]byte, 7)
		for {
			n, err := ev.Data.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Errorf("read %d bytes in small pieces, want the %d bytes of the payload", len(got), len(payload))
	}
}
