package local

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestNativeNewIsTheScripts: a read with a reader's cursor made in Go
// prints, byte for byte, what logs.sh's mode new prints under each shell,
// and leaves the cursors as the script leaves them: from no cursor, one
// without a mark, one whose mark the log holds, one it does not hold
// (truncated: read from the start, the cursor back to 0), one past the
// end, with the last lines of what is new, with a cap, after an earlier
// read's commit, and with the reader's reports on stdin (some of them not
// reports), of an ended and a running job. The Go read is reader "go",
// the script's reader "sh", each from the same cursor files.
func TestNativeNewIsTheScripts(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	shells := nativeShells(t)
	ctx := context.Background()
	jobs := map[string]jobdirtest.Job{
		"ended":   {State: jobdirtest.Exited, Stdout: "hello\nwörld\nend\n", Stderr: "ab\ncd\n"},
		"running": {State: jobdirtest.Running, Stdout: "hello\nwörld\npart\xc3", Stderr: "ab\ncd\n"},
	}
	both := []string{"stdout", "stderr"}
	cases := []struct {
		name    string
		cursors map[string]string // stream to the cursor file's line ("": none)
		q       shellgen.Logs
		stdin   string
	}{
		{name: "no cursor", q: shellgen.Logs{Streams: both}},
		{name: "no mark", cursors: map[string]string{"stdout": "3", "stderr": "1"}, q: shellgen.Logs{Streams: both}},
		{name: "its mark", cursors: map[string]string{"stdout": "6 68656c6c6f0a"}, q: shellgen.Logs{Streams: both}},
		{name: "a mark gone", cursors: map[string]string{"stdout": "6 7878780a"}, q: shellgen.Logs{Streams: both}},
		{name: "past the end", cursors: map[string]string{"stdout": "100 61", "stderr": "100"}, q: shellgen.Logs{Streams: both}},
		{name: "odd cursor", cursors: map[string]string{"stdout": "x7 zz", "stderr": "2 6g"}, q: shellgen.Logs{Streams: both}},
		{name: "tail", cursors: map[string]string{"stdout": "2"}, q: shellgen.Logs{Streams: both, Tail: 1}},
		{name: "cap", q: shellgen.Logs{Streams: both, MaxBytes: 4}},
		{name: "cap cut a character", cursors: map[string]string{"stdout": "6"}, q: shellgen.Logs{Streams: []string{"stdout"}, MaxBytes: 2}},
		{name: "reports", q: shellgen.Logs{Streams: both},
			stdin: "stdout 4 6c6c\nnot a report\nstderr 2 6162\nstdout 3\nstdout 9 zz\nstderr 5 6364 extra\nstdout 12"},
		{name: "nine reports", q: shellgen.Logs{Streams: both},
			stdin: "stdout 1 68\nstdout 2 65\nstdout 3 6c\nstdout 4 6c\nstderr 1 61\nstdout 5 6f\nstdout 6 0a\nstdout 7 77\nstdout 8 c3\nstdout 9 b6\n"},
		{name: "reports follow the mark", cursors: map[string]string{"stdout": "2 6865"}, q: shellgen.Logs{Streams: []string{"stdout"}},
			stdin: "stdout 4 6c6c\nstdout 6 6f0a\n"},
	}
	for name, j := range jobs {
		d := jobdirtest.Make(t, root, "default", j)
		for _, tc := range cases {
			for _, commit := range []bool{false, true} {
				q := tc.q
				q.Ref, q.New = d.Meta.ID, true
				if commit {
					q.CommitJob = d.Meta.ID
					q.Commit = map[string]int64{"stdout": 3, "stderr": -1}
					q.CommitMarks = map[string][]byte{"stdout": []byte("lo")}
				}
				for sh, path := range shells {
					label := name + "/" + tc.name + "/" + sh
					if commit {
						label += "/commit"
					}
					for _, reader := range []string{"go", "sh"} {
						for _, st := range both {
							cur := filepath.Join(d.Path, "cursor-"+reader+"."+st)
							os.Remove(cur)
							if l, ok := tc.cursors[st]; ok {
								write(t, cur, l+"\n")
							}
						}
					}
					gq, sq := q, q
					gq.Reader, sq.Reader = "go", "sh"
					req, err := shellgen.LogsRequest(targetOf(c), gq)
					if err != nil {
						t.Fatal(err)
					}
					var got bytes.Buffer
					in, sent := reportsAfterSent(&got, tc.stdin)
					ok, err := (&Runtime{Shell: path}).Answer(ctx, req, in, sent)
					if err != nil || !ok {
						t.Fatalf("%s: answered %v, %v", label, ok, err)
					}
					script, err := shellgen.LogsScript(targetOf(c), sq)
					if err != nil {
						t.Fatal(err)
					}
					var want bytes.Buffer
					in, sent = reportsAfterSent(&want, tc.stdin)
					if err := (&Runtime{Shell: path}).Exec(ctx, script, in, sent); err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					if got.String() != want.String() {
						t.Errorf("%s:\nmade in Go %q\nthe script %q", label, got.String(), want.String())
					}
					for _, st := range both {
						g, gerr := os.ReadFile(filepath.Join(d.Path, "cursor-go."+st))
						s, serr := os.ReadFile(filepath.Join(d.Path, "cursor-sh."+st))
						if string(g) != string(s) || (gerr == nil) != (serr == nil) {
							t.Errorf("%s: the %s cursor made in Go %q (%v), the script's %q (%v)", label, st, g, gerr, s, serr)
						}
					}
				}
			}
		}
	}
}

// TestNativeNewBusyCursor: a read whose cursor another reader holds waits
// for it, then says that it is busy, as the script does, and reads once
// it is let go.
func TestNativeNewBusyCursor(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	d := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Exited, Stdout: "x\n"})
	lockName := filepath.Join(d.Path, "cursor-default.lock")
	release := holdLock(t, lockName)
	req, err := shellgen.LogsRequest(targetOf(c), shellgen.Logs{Ref: d.Meta.ID, New: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if ok, err := New().Answer(context.Background(), req, nil, &out); !ok || err != nil {
		t.Fatalf("answered %v, %v", ok, err)
	}
	if want := "E\tcursorbusy\tthe read cursor is busy: another reader holds " + lockName + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("the busy read printed %q, want %q", out.String(), want)
	}
	release()
	out.Reset()
	if ok, err := New().Answer(context.Background(), req, io.NopCloser(strings.NewReader("")), &out); !ok || err != nil {
		t.Fatalf("answered %v, %v", ok, err)
	}
	if !strings.Contains(out.String(), "D\tstdout\t0\t2\t0\nx\n") {
		t.Errorf("the read once let go printed %q, want the log", out.String())
	}
}

// reportsAfterSent returns the stdin of a read whose output goes to out,
// and the writer to give it: as a reader does, the reports come once the
// read has printed its A record (what it has sent), and stdin ends then.
func reportsAfterSent(out *bytes.Buffer, reports string) (io.Reader, io.Writer) {
	pr, pw := io.Pipe()
	return pr, &sentWriter{out: out, sent: func() {
		go func() {
			io.WriteString(pw, reports)
			pw.Close()
		}()
	}}
}

// sentWriter writes to out, and calls sent once what it wrote holds the A
// record.
type sentWriter struct {
	out  *bytes.Buffer
	sent func()
	done bool
}

func (w *sentWriter) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	if !w.done && bytes.Contains(w.out.Bytes(), []byte("\nA\tsent\n")) {
		w.done = true
		w.sent()
	}
	return n, err
}

// TestChunksOfALogShrunkUnderTheRead: a log found shorter than the range
// a read made of it (truncated between its size and its bytes) gives NUL
// bytes to the record's length, so the records after it stay in step, a
// t record of its size, and no more of its chunks nor its Z record, as
// bg_exact and bg_chunked print them: for an ended job's one record and a
// running job's chunks.
func TestChunksOfALogShrunkUnderTheRead(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "stdout.log")
	write(t, name, "abc")
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		live bool
		want string
	}{
		{false, "D\tstdout\t1\t5\t0\nbc\x00\x00\x00t\tstdout\t3\n"},
		{true, "D\tstdout\t1\t5\t1\nbc\x00\x00\x00t\tstdout\t3\n"},
	} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		rd := logRead{stream: "stdout", f: f, live: tc.live, size: 6, span: span{from: 1, to: 6, cut: true}}
		if err := writeRead(w, rd, dir); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if b.String() != tc.want {
			t.Errorf("live %v: %q, want %q", tc.live, b.String(), tc.want)
		}
	}
}

// TestReadOfAJobEnding: a job whose wrapper has written its status
// (exit_code.tmp) but not yet renamed it is reported ended, so its logs
// are read whole, also an incomplete character at their end, as logs.sh
// reads them: a follow that stops at that report has printed every byte.
func TestReadOfAJobEnding(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	d := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Running, Stdout: "e\xe2\x82"})
	write(t, filepath.Join(d.Path, "exit_code.tmp"), "0  \n")
	q := shellgen.Logs{Ref: d.Meta.ID, Streams: []string{"stdout"}, HasOffset: true, Offsets: map[string]int64{"stdout": 0}}
	r, done, _, ok := answererOf(c).logs(context.Background(), q, nil)
	if !ok {
		t.Fatal("left to the script")
	}
	got, err := io.ReadAll(r)
	done()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("D\tstdout\t0\t3\t0\ne\xe2\x82")) {
		t.Errorf("the read of a job ending: %q, want its 3 bytes whole", got)
	}
	for sh, path := range nativeShells(t) {
		script, err := shellgen.LogsScript(targetOf(c), q)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := (&Runtime{Shell: path}).Exec(context.Background(), script, nil, &want); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("%s: made in Go %q, the script %q", sh, got, want.String())
		}
	}
}

// TestNewReadSizesUnderTheLock: a read with a cursor that waits for its
// lock takes a running job's log sizes once it holds it: another reader
// that moved the cursor past the size the log had when the read began is
// no truncation (the read used to say the log was truncated and send it
// again from its start).
func TestNewReadSizesUnderTheLock(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	d := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Running, Stdout: "one\n"})
	write(t, filepath.Join(d.Path, "cursor-default.stdout"), "4 6f6e650a\n")
	lockName := filepath.Join(d.Path, "cursor-default.lock")
	release := holdLock(t, lockName)
	req, err := shellgen.LogsRequest(targetOf(c), shellgen.Logs{Ref: d.Meta.ID, New: true, Streams: []string{"stdout"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	answered := make(chan error, 1)
	go func() {
		_, err := New().Answer(context.Background(), req, strings.NewReader(""), &out)
		answered <- err
	}()
	// While the read waits: the job writes, another reader reads it.
	time.Sleep(300 * time.Millisecond)
	f, err := os.OpenFile(filepath.Join(d.Path, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	write(t, filepath.Join(d.Path, "cursor-default.stdout"), "8 6f6e650a74776f0a\n")
	release()
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\nt\t") || !strings.Contains(out.String(), "D\tstdout\t8\t0\t1\n") {
		t.Errorf("the read that waited: %q, want nothing new from 8 and no rewind", out.String())
	}
}

// holdLock holds the lock file name with flock(1), as a script's reader
// holds a cursor's, until release (or the test's end) lets it go.
func holdLock(t *testing.T, name string) (release func()) {
	t.Helper()
	// -o: the lock is flock's own, not inherited by the sleep, so killing
	// flock lets it go.
	hold := exec.Command("flock", "-o", name, "sleep", "60")
	hold.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			syscall.Kill(-hold.Process.Pid, syscall.SIGKILL)
			hold.Wait()
		})
	}
	t.Cleanup(release)
	if !settled(func() bool { return exec.Command("flock", "-n", name, "true").Run() != nil }) {
		t.Fatal("the lock was not taken")
	}
	return release
}
