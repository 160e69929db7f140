package bgjob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
	"github.com/bgjob/bgjob/termtext"
)

// LogOptions.Validate is the one home of the rules about how a read's
// options go together; the CLI and the MCP server word its FieldError with
// their own names.
func TestLogOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o            bgjob.LogOptions
		field, other string
	}{
		{bgjob.LogOptions{}, "", ""},
		{bgjob.LogOptions{Cursor: &bgjob.Cursor{}, Tail: 3}, "", ""},
		{bgjob.LogOptions{Tail: bgjob.Zero}, "", ""},
		{bgjob.LogOptions{FromOffset: true}, "", ""},
		{bgjob.LogOptions{Tail: 1, Head: 1}, "Tail", "Head"},
		{bgjob.LogOptions{Head: 1, FromOffset: true}, "Head", "Offset"},
		{bgjob.LogOptions{Bytes: bgjob.Zero, Cursor: &bgjob.Cursor{}}, "Bytes", "Cursor"},
		{bgjob.LogOptions{Tail: -2}, "Tail", ""},
		{bgjob.LogOptions{Offset: -1, FromOffset: true}, "Offset", ""},
		{bgjob.LogOptions{MaxBytes: -1}, "MaxBytes", ""},
		{bgjob.LogOptions{Cursor: &bgjob.Cursor{Reader: "r", Hold: true}, Follow: true}, "Cursor", "Follow"},
		{bgjob.LogOptions{Head: 3, Follow: true}, "Head", "Follow"},
		{bgjob.LogOptions{Tail: 3, Follow: true}, "", ""},
	} {
		err := tc.o.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v, want nil", tc.o, err)
			}
			continue
		}
		var fe *bgjob.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, bgjob.ErrUsage) || fe.Field != tc.field || fe.Other != tc.other {
			t.Errorf("%+v: %v (%+v), want a usage FieldError on %s and %q", tc.o, err, fe, tc.field, tc.other)
		}
	}
}

// TestCursorHoldDelivered: a read through a Cursor that holds moves the
// cursor over nothing; Delivered has the next read through it move the
// cursor over that read first, only if its ref names the read's job: a
// read of another job leaves it for the next read of its own. A read of
// nothing (Tail Zero) moves the cursor over it alone.
func TestCursorHoldDelivered(t *testing.T) {
	root := t.TempDir()
	a := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Exited, Stdout: "0123456789"})
	b := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Exited, Stdout: "abc"})
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func(ref string, o bgjob.LogOptions, want string) bgjob.LogResult {
		t.Helper()
		var out bytes.Buffer
		o.Stdout = true
		res, err := c.Logs(ctx, ref, o, &out, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("read of %s: %q, want %q", ref, out.String(), want)
		}
		return res
	}
	cur := &bgjob.Cursor{Reader: "holder", Hold: true}
	held := bgjob.LogOptions{Cursor: cur, MaxBytes: 4}
	res := read(a.Meta.ID, held, "0123")
	res = read(a.Meta.ID, held, "0123")
	cur.Delivered(res)
	read(b.Meta.ID, held, "abc")
	read(b.Meta.ID, bgjob.LogOptions{Cursor: &bgjob.Cursor{Reader: "holder"}}, "abc")
	res = read(a.Meta.ID, held, "4567")
	cur.Delivered(res)
	read(a.Meta.ID, bgjob.LogOptions{Cursor: cur, Tail: bgjob.Zero}, "")
	read(a.Meta.ID, bgjob.LogOptions{Cursor: &bgjob.Cursor{Reader: "holder"}}, "89")
}

// A read of the logs does not look at the host's processes, and says so
// (ProcessScan "none"); a follow counts them once the job has ended, here
// the one process it left behind (the local runtime's watched follow, as
// the follow script over SSH does).
func TestLogsDoNotCountProcesses(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 60 & echo left"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background(), []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
	if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := c.Logs(ctx, j.ID, bgjob.LogOptions{}, &out, io.Discard)
	if err != nil || out.String() != "left\n" {
		t.Fatalf("Logs: %q, %v", out.String(), err)
	}
	if res.Job.ProcessScan != jobdir.ScanNone || res.Job.LiveProcesses != 0 {
		t.Errorf("a read's job: process_scan %q, %d live; want none, 0 (not counted)", res.Job.ProcessScan, res.Job.LiveProcesses)
	}
	res, err = c.Logs(ctx, j.ID, bgjob.LogOptions{Follow: true}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.ProcessScan != "" || res.Job.LiveProcesses != 1 {
		t.Errorf("a follow's job: process_scan %q, %d live; want counted, 1 (the sleep)", res.Job.ProcessScan, res.Job.LiveProcesses)
	}
}

// scriptOnly hides the local runtime's Watcher: its follows run the follow
// script, as over SSH.
type scriptOnly struct{ bgjob.Runtime }

// A follow on this machine copies what is appended to the logs natively
// (runtime/local is a Watcher); the script's follow loop is the
// specification. Both follow the same jobs at once and must deliver the
// same bytes, with the same ranges: every byte of each log, once, in order
// (lines, bytes that are not UTF-8, NULs, a last line without a newline,
// both streams, writes before and after the follow starts).
func TestFollowNativeMatchesScript(t *testing.T) {
	root := t.TempDir()
	native, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	script, err := bgjob.NewClient(scriptOnly{local.New()}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for name, cmd := range map[string]string{
		"lines":  `i=0; while [ $i -lt 40 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.02; done`,
		"binary": `printf 'a\000b\377\376'; sleep 0.3; printf '\303'; sleep 0.2; printf '\251 end' >&2; printf 'no newline'`,
		"burst":  `sleep 0.3; seq 1 20000; seq 1 300 >&2; sleep 0.2; seq 5 9`,
		// Megabytes at a time: the native follow looks a pause apart,
		// without the watch (errFlood), and sees the end after it.
		"flood": `i=0; while [ $i -lt 8 ]; do seq 1 400000; seq 1 100000 >&2; i=$((i+1)); sleep 0.05; done; sleep 0.2; echo last`,
		// A character cut off at the end of the log past its first 255
		// bytes while the follow's tick runs the script (every 3 s): the
		// script's read once ended before it started there, and the native
		// copy printed the bytes between again.
		"cut char": `head -c 300 /dev/zero | tr '\0' a; sleep 0.3; printf 'x\342\202'; sleep 3.5; printf '\254\n'`,
	} {
		t.Run(name, func(t *testing.T) {
			j, err := native.Run(ctx, bgjob.Spec{Argv: []string{cmd}})
			if err != nil {
				t.Fatal(err)
			}
			type followed struct {
				out, errb bytes.Buffer
				res       bgjob.LogResult
				err       error
			}
			var got [2]followed
			done := make(chan struct{}, 2)
			for i, c := range []*bgjob.Client{native, script} {
				go func() {
					defer func() { done <- struct{}{} }()
					got[i].res, got[i].err = c.Logs(ctx, j.ID, bgjob.LogOptions{Follow: true}, &got[i].out, &got[i].errb)
				}()
			}
			<-done
			<-done
			wantOut, _ := os.ReadFile(filepath.Join(root, jobdir.DefaultWorkspace, j.ID, "stdout.log"))
			wantErr, _ := os.ReadFile(filepath.Join(root, jobdir.DefaultWorkspace, j.ID, "stderr.log"))
			for i, way := range []string{"native", "script"} {
				g := &got[i]
				if g.err != nil || !g.res.Job.Status.Ended() {
					t.Fatalf("%s follow: %v, job %s", way, g.err, g.res.Job.Status)
				}
				if !bytes.Equal(g.out.Bytes(), wantOut) || !bytes.Equal(g.errb.Bytes(), wantErr) {
					t.Errorf("%s follow: stdout %d bytes, stderr %d; the logs hold %d and %d (stdout %q...)", way, g.out.Len(), g.errb.Len(), len(wantOut), len(wantErr), g.out.Bytes()[:min(g.out.Len(), 40)])
				}
			}
			norm := func(rs []bgjob.LogRange) []bgjob.LogRange {
				rs = slices.Clone(rs)
				slices.SortFunc(rs, func(a, b bgjob.LogRange) int { return strings.Compare(a.Stream, b.Stream) })
				return rs
			}
			if a, b := norm(got[0].res.Ranges), norm(got[1].res.Ranges); !slices.Equal(a, b) {
				t.Errorf("ranges: native %+v, script %+v", a, b)
			}
		})
	}
}

// slowWriter takes a millisecond for each 4 KiB it is given.
type slowWriter struct{ n int }

func (w *slowWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == 0 {
			w.n++
		}
	}
	time.Sleep(time.Duration(len(p)/4096+1) * time.Millisecond)
	return len(p), nil
}

// A follow on this machine whose reader is slower than the job, with a
// --max-log-size cap: what the cap drops while a piece is read is left
// out, as the script's check records do, never printed as the zeros of
// the hole it punched. The job writes only "a"s.
func TestFollowNativeCappedSlowReader(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{`sleep 0.3; i=0; while [ $i -lt 16 ]; do head -c 524288 /dev/zero | tr '\0' a; i=$((i+1)); done; echo END`}, MaxLogSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var w slowWriter
	res, err := c.Logs(ctx, j.ID, bgjob.LogOptions{Follow: true, Stdout: true}, &w, io.Discard)
	if err != nil || !res.Job.Status.Ended() {
		t.Fatalf("follow: %v, job %s", err, res.Job.Status)
	}
	if w.n > 0 {
		t.Errorf("the follow printed %d NUL bytes: the zeros of holes the cap punched", w.n)
	}
}

// A cut to the cap never splits an escape sequence, on a job without a
// terminal too: it backs off to the sequence's start, or takes a sequence
// the range starts with whole, so that text made of each read
// (logs --new --plain, the MCP server) never shows a piece of one
// ("PASS[0m", ";32mPASS"). Every cap from 1 byte up cuts at every place;
// reads through a cursor and by offset (made in Go for an ended job) alike.
func TestCapNeverSplitsASequence(t *testing.T) {
	root := t.TempDir()
	log := strings.Repeat("\x1b[1;32mPASS\x1b[0m ok\r\n\x1b]0;title\x07\r\r\n", 3) + "\x1b(Bend\n"
	d := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Exited, Stdout: log})
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	want := string(termtext.Strip([]byte(log)))
	ctx := context.Background()
	for max := int64(1); max <= 24; max++ {
		for _, mode := range []string{"new", "offset"} {
			var got strings.Builder
			off := int64(0)
			reads := 0
			for ; reads < len(log)+1; reads++ {
				o := bgjob.LogOptions{Stdout: true, MaxBytes: max}
				if mode == "new" {
					o.Cursor = &bgjob.Cursor{Reader: fmt.Sprintf("r%d", max)}
				} else {
					o.FromOffset, o.Offset = true, off
				}
				var out bytes.Buffer
				res, err := c.Logs(ctx, d.Meta.ID, o, &out, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(termtext.Strip(out.Bytes()))
				off = res.Ranges[0].Next
				if !res.Ranges[0].Truncated {
					break
				}
			}
			if got.String() != want {
				t.Errorf("cap %d, %s: %d reads made %q, want %q", max, mode, reads+1, got.String(), want)
			}
		}
	}
}
