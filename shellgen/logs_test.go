package shellgen_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// chunk is one D record and its bytes.
type chunk struct {
	Stream string
	Offset int64
	Data   string
}

// logsStdout is a log that a line-based or marker-based reader would get
// wrong: markers and records in the text, NUL and invalid UTF-8, and no
// newline at the end.
const logsStdout = "line1\n" + shellgen.EndMarker + "\nJ\tfake\n\x00\xff binary\nlast 日本 no newline"

const logsStderr = "err1\nerr2\n"

// runLogs runs a logs script with sh and returns its chunks and the
// number of job observations it printed.
func runLogs(t *testing.T, sh shell, root string, l shellgen.Logs) ([]chunk, int) {
	t.Helper()
	script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, l)
	if err != nil {
		t.Fatal(err)
	}
	cmd := sh.command(t, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if !l.New {
		present(t, cmd)
	}
	if l.New {
		// A reader that takes every byte: it reports the end of each
		// chunk, and ends stdin at the A record.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var chunks []chunk
		jobs := 0
		_, err = records.Handler{
			Job: func(jobdir.Observation, string) error { jobs++; return nil },
			Data: func(st string, off int64, r io.Reader) error {
				b, err := io.ReadAll(r)
				chunks = append(chunks, chunk{st, off, string(b)})
				fmt.Fprintf(stdin, "%s %d\n", st, off+int64(len(b)))
				return err
			},
			Sent: func() error { return stdin.Close() },
		}.Decode(stdout)
		if werr := cmd.Wait(); err != nil || werr != nil {
			t.Fatalf("decoding: %v, %v\nstderr:\n%s", err, werr, stderr.Bytes())
		}
		return chunks, jobs
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	var chunks []chunk
	jobs := 0
	err = decodeEvents(bytes.NewReader(out), func(ev streamEvent) error {
		switch {
		case ev.Err != nil:
			return ev.Err
		case ev.Job != nil:
			jobs++
		case ev.Data != nil:
			b, err := io.ReadAll(ev.Data)
			if err != nil {
				return err
			}
			chunks = append(chunks, chunk{ev.Stream, ev.Offset, string(b)})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("decoding: %v\noutput:\n%q\nstderr:\n%s", err, out, stderr.Bytes())
	}
	return chunks, jobs
}

// TestLogsScriptRuns reads the logs of an ended job with every range the
// logs script offers, under every shell, and checks the exact bytes.
func TestLogsScriptRuns(t *testing.T) {
	n := int64(len(logsStdout))
	lastTwo := "\x00\xff binary\nlast 日本 no newline"
	tests := []struct {
		name   string
		logs   shellgen.Logs
		want   []chunk
		follow bool
	}{
		{"whole stdout", shellgen.Logs{}, []chunk{{"stdout", 0, logsStdout}}, false},
		{"stderr", shellgen.Logs{Streams: []string{"stderr"}}, []chunk{{"stderr", 0, logsStderr}}, false},
		{"both", shellgen.Logs{Streams: []string{"stdout", "stderr"}}, []chunk{{"stdout", 0, logsStdout}, {"stderr", 0, logsStderr}}, false},
		{"tail", shellgen.Logs{Tail: 2}, []chunk{{"stdout", n - int64(len(lastTwo)), lastTwo}}, false},
		{"tail longer than the log", shellgen.Logs{Tail: 100}, []chunk{{"stdout", 0, logsStdout}}, false},
		{"tail of stderr", shellgen.Logs{Streams: []string{"stderr"}, Tail: 1}, []chunk{{"stderr", 5, "err2\n"}}, false},
		{"head", shellgen.Logs{Head: 2}, []chunk{{"stdout", 0, "line1\n" + shellgen.EndMarker + "\n"}}, false},
		{"head longer than the log", shellgen.Logs{Head: 100}, []chunk{{"stdout", 0, logsStdout}}, false},
		{"bytes", shellgen.Logs{Bytes: 7}, []chunk{{"stdout", n - 7, "newline"}}, false},
		{"bytes beyond the log", shellgen.Logs{Bytes: 1000}, []chunk{{"stdout", 0, logsStdout}}, false},
		{"offset", shellgen.Logs{Offsets: map[string]int64{"stdout": 6}, HasOffset: true}, []chunk{{"stdout", 6, logsStdout[6:]}}, false},
		{"offset zero", shellgen.Logs{HasOffset: true}, []chunk{{"stdout", 0, logsStdout}}, false},
		{"offset at the end", shellgen.Logs{Offsets: map[string]int64{"stdout": n}, HasOffset: true}, []chunk{{"stdout", n, ""}}, false},
		{"offset beyond the end", shellgen.Logs{Offsets: map[string]int64{"stdout": n + 10}, HasOffset: true}, []chunk{{"stdout", n, ""}}, false},
		{"max bytes keeps the start", shellgen.Logs{MaxBytes: 4}, []chunk{{"stdout", 0, "line"}}, false},
		{"max bytes over both logs", shellgen.Logs{Streams: []string{"stdout", "stderr"}, MaxBytes: n + 2}, []chunk{{"stdout", 0, logsStdout}, {"stderr", 0, "er"}}, false},
		{"max bytes with tail keeps the end", shellgen.Logs{Tail: 1, MaxBytes: 7}, []chunk{{"stdout", n - 7, "newline"}}, false},
		{"max bytes with tail starts at a character", shellgen.Logs{Tail: 1, MaxBytes: int64(len("本 no newline")) - 1}, []chunk{{"stdout", n - 11, " no newline"}}, false},
		{"max bytes never splits a character", shellgen.Logs{MaxBytes: n - int64(len(" no newline")) - 1}, []chunk{{"stdout", 0, logsStdout[:n-int64(len(" no newline"))-3]}}, false},
		{"follow an ended job", shellgen.Logs{Follow: true}, []chunk{{"stdout", 0, logsStdout}}, true},
		{"follow both with tail", shellgen.Logs{Streams: []string{"stdout", "stderr"}, Tail: 1, Follow: true},
			[]chunk{{"stdout", n - int64(len("last 日本 no newline")), "last 日本 no newline"}, {"stderr", 5, "err2\n"}}, true},
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			m := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "logs"}, Stdout: logsStdout, Stderr: logsStderr}).Meta
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					l := tt.logs
					l.Ref = m.ID
					got, jobs := runLogs(t, sh, root, l)
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("chunks (-want +got):\n%s", diff)
					}
					wantJobs := 1
					if tt.follow {
						wantJobs = 2
					}
					if jobs != wantJobs {
						t.Errorf("%d observations, want %d", jobs, wantJobs)
					}
				})
			}
		})
	}
}

// TestLogsScriptNew moves a reader's cursor through a log that grows, and
// checks that a running job's log is never cut inside a UTF-8 character.
func TestLogsScriptNew(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			m := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running}).Meta
			stdout := filepath.Join(root, "w", m.ID, "stdout.log")
			appendLog := func(s string) {
				f, err := os.OpenFile(stdout, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(s); err != nil {
					t.Fatal(err)
				}
			}
			steps := []struct {
				name   string
				add    string
				reader string
				want   chunk
			}{
				{"empty log", "", "a", chunk{"stdout", 0, ""}},
				{"first line", "hello\n", "a", chunk{"stdout", 0, "hello\n"}},
				{"nothing new", "", "a", chunk{"stdout", 6, ""}},
				{"another reader starts at 0", "", "b", chunk{"stdout", 0, "hello\n"}},
				// 日 is e6 97 a5; 本 is e6 9c ac; é is c3 a9; 😀 is f0 9f 98 80.
				{"one byte of three", "x\xe6", "a", chunk{"stdout", 6, "x"}},
				{"two bytes of three", "\x97", "a", chunk{"stdout", 7, ""}},
				{"character complete", "\xa5", "a", chunk{"stdout", 7, "日"}},
				{"one byte of two", "\xc3", "a", chunk{"stdout", 10, ""}},
				{"three bytes of four", "\xa9\xf0\x9f\x98", "a", chunk{"stdout", 10, "é"}},
				{"four bytes of four", "\x80", "a", chunk{"stdout", 12, "😀"}},
				{"ASCII after", "end", "a", chunk{"stdout", 16, "end"}},
				{"stray continuation byte is passed", "\x80", "a", chunk{"stdout", 19, "\x80"}},
				{"reader b catches up", "", "b", chunk{"stdout", 6, "x日é😀end\x80"}},
			}
			for _, st := range steps {
				appendLog(st.add)
				got, _ := runLogs(t, sh, root, shellgen.Logs{Ref: m.ID, New: true, Reader: st.reader})
				if diff := cmp.Diff([]chunk{st.want}, got); diff != "" {
					t.Fatalf("%s: chunks (-want +got):\n%s", st.name, diff)
				}
			}
		})
	}
}

// TestLogsScriptCommit: a read with a cursor moves it over what its
// reader reports on stdin and nothing else, never back; Commit moves it
// first, for its job only.
func TestLogsScriptCommit(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{Stdout: "0123456789"})
			id := job.Meta.ID
			read := func(l shellgen.Logs, stdin string) string {
				t.Helper()
				l.Ref, l.New, l.Reader = id, true, "r"
				script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, l)
				if err != nil {
					t.Fatal(err)
				}
				cmd := sh.command(t, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
				cmd.Stdin = strings.NewReader(stdin)
				out, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				var got string
				_, err = records.Handler{Data: func(_ string, _ int64, r io.Reader) error {
					b, err := io.ReadAll(r)
					got += string(b)
					return err
				}}.Decode(bytes.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			// The reports here are on stdin before the script reads the
			// cursor, so a read may start after them ("" as want: not
			// checked); the cursor after it is checked.
			steps := []struct {
				name   string
				l      shellgen.Logs
				stdin  string
				want   string
				cursor string
			}{
				{"a reader that reports nothing", shellgen.Logs{}, "", "0123456789", ""},
				{"is given the same bytes again", shellgen.Logs{}, "", "0123456789", ""},
				{"a report of 3", shellgen.Logs{}, "stdout 3\n", "", "3\n"},
				{"never back, nor to nonsense", shellgen.Logs{}, "stdout 2\nbogus\nstdout x\nstderr\n", "3456789", "3\n"},
				{"commit of another job", shellgen.Logs{CommitJob: "20260101T000000-aaaaaa", Commit: map[string]int64{"stdout": 8}}, "", "3456789", "3\n"},
				{"commit of the job", shellgen.Logs{CommitJob: id, Commit: map[string]int64{"stdout": 6}}, "", "6789", "6\n"},
				{"commit never moves back", shellgen.Logs{CommitJob: id, Commit: map[string]int64{"stdout": 1}}, "", "6789", "6\n"},
			}
			for _, st := range steps {
				if got := read(st.l, st.stdin); st.want != "" && got != st.want {
					t.Fatalf("%s: read %q, want %q", st.name, got, st.want)
				}
				b, _ := os.ReadFile(filepath.Join(job.Path, "cursor-r.stdout"))
				if string(b) != st.cursor {
					t.Fatalf("%s: cursor %q, want %q", st.name, b, st.cursor)
				}
			}
		})
	}
}

// TestLogsScriptFollow follows the log of a running job while it grows
// and ends, and checks that the chunks are contiguous and complete; an
// interactive follow (attach's) the same. Either is woken by its trigger
// (tail -f) where tail is GNU's, and leaves no process of it behind.
func TestLogsScriptFollow(t *testing.T) {
	for _, sh := range allShells {
		for _, interactive := range []bool{false, true} {
			name := sh.name
			if interactive {
				name += "/interactive"
			}
			t.Run(name, func(t *testing.T) { testLogsScriptFollow(t, sh, interactive) })
		}
	}
}

func testLogsScriptFollow(t *testing.T, sh shell, interactive bool) {
	sh.path(t)
	t.Parallel()
	root := filepath.Join(t.TempDir(), "root")
	job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
	m, dir := job.Meta, job.Path

	script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: m.ID, Follow: true, Interactive: interactive})
	if err != nil {
		t.Fatal(err)
	}
	cmd := sh.command(t, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdin, err := cmd.StdinPipe() // the script ends early when stdin closes
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()

	f, err := os.OpenFile(filepath.Join(dir, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := "before\n"
	var got []chunk
	jobs := 0
	next := int64(0)
	woken := false // the trigger (tail -f) was seen reading the log
	err = decodeEvents(out, func(ev streamEvent) error {
		switch {
		case ev.Err != nil:
			return ev.Err
		case ev.Job != nil:
			jobs++
		case ev.Data != nil:
			b, err := io.ReadAll(ev.Data)
			if err != nil {
				return err
			}
			if ev.Offset != next {
				t.Errorf("chunk at %d, want %d", ev.Offset, next)
			}
			next = ev.Offset + int64(len(b))
			got = append(got, chunk{ev.Stream, ev.Offset, string(b)})
			if len(got) > 1 && len(readers(filepath.Join(dir, "stdout.log"))) > 0 {
				woken = true
			}
			// Each chunk makes the job write more, three times, then end.
			switch len(got) {
			case 1, 2, 3:
				s := strings.Repeat(string(rune('a'+len(got))), len(got)) + "\xe6\x97"
				f.WriteString(s)
				want += s
			case 4:
				f.WriteString("\xa5 last")
				want += "\xa5 last"
				job.End(t, 0)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, c := range got {
		all.WriteString(c.Data)
	}
	if all.String() != want || jobs != 2 {
		t.Errorf("followed %q in %d chunks with %d observations, want %q with 2", all.String(), len(got), jobs, want)
	}
	// Only GNU tail (the tail on PATH, whichever the shell) wakes a
	// follow.
	if gnu := gnuTail(); woken != gnu {
		t.Errorf("trigger seen: %v, want %v (GNU tail)", woken, gnu)
	}
	stdin.Close()
	cmd.Wait()
	log := filepath.Join(dir, "stdout.log")
	if !eventually(5*time.Second, func() bool { return len(readers(log)) == 0 }) {
		t.Errorf("processes left reading %s after the follow: %v", log, readers(log))
	}
}

// gnuTail reports whether tail is GNU's.
func gnuTail() bool {
	out, _ := exec.Command("tail", "--version").Output()
	return bytes.Contains(out, []byte("GNU"))
}

// readers returns the processes that follow file: whose command line
// names it after -f or -F (tail -f, tail -F).
func readers(file string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(file)) && (bytes.Contains(b, []byte("\x00-f\x00")) || bytes.Contains(b, []byte("\x00-F\x00"))) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestWaitForScriptRuns waits for lines of an ended job's logs under every
// shell: a line holding NUL and invalid UTF-8, the last line without a
// newline, one stream only, no match, and a bad expression.
func TestWaitForScriptRuns(t *testing.T) {
	binLine := "\x00\xff binary\n"
	binAt := int64(strings.Index(logsStdout, binLine))
	last := "last 日本 no newline"
	tests := []struct {
		name    string
		q       shellgen.WaitFor
		want    []chunk
		state   string
		refused string
	}{
		{"line with NUL", shellgen.WaitFor{Pattern: "bin[a-z]+$"}, []chunk{{"stdout", binAt, binLine}}, "", ""},
		{"last line without newline", shellgen.WaitFor{Pattern: "no newline$"}, []chunk{{"stdout", int64(len(logsStdout) - len(last)), last}}, "", ""},
		{"stderr only", shellgen.WaitFor{Pattern: "^(line1|err2)$", Streams: []string{"stderr"}}, []chunk{{"stderr", 5, "err2\n"}}, "", ""},
		{"both, stdout first", shellgen.WaitFor{Pattern: "^(line1|err2)$"}, []chunk{{"stdout", 0, "line1\n"}}, "", ""},
		{"from an offset", shellgen.WaitFor{Pattern: "^(line1|err2)$", Offsets: map[string]int64{"stdout": 1}}, []chunk{{"stderr", 5, "err2\n"}}, "", ""},
		{"no match", shellgen.WaitFor{Pattern: "zzz"}, nil, "ended", ""},
		{"bad expression", shellgen.WaitFor{Pattern: "a("}, nil, "", "regex"},
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			m := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "logs"}, Stdout: logsStdout, Stderr: logsStderr}).Meta
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					q := tt.q
					q.Ref = m.ID
					script, err := shellgen.WaitForScript(shellgen.Target{Root: root, Workspace: "w"}, q)
					if err != nil {
						t.Fatal(err)
					}
					cmd := sh.command(t, "-c", script)
					cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
					present(t, cmd)
					out, err := cmd.Output()
					if err != nil {
						t.Fatal(err)
					}
					var (
						got            []chunk
						state, refused string
					)
					_, err = records.Handler{
						Wait:    func(s string) { state = s },
						Refused: func(k, _ string) error { refused = k; return nil },
						Data: func(st string, off int64, r io.Reader) error {
							b, err := io.ReadAll(r)
							got = append(got, chunk{st, off, string(b)})
							return err
						},
					}.Decode(bytes.NewReader(out))
					if err != nil {
						t.Fatalf("decoding: %v\n%q", err, out)
					}
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("chunks (-want +got):\n%s", diff)
					}
					if state != tt.state || refused != tt.refused {
						t.Errorf("state %q, refusal %q; want %q, %q", state, refused, tt.state, tt.refused)
					}
				})
			}
		})
	}
}

// TestLogsScriptFollowCallerGone: a follow, or a wait --for, whose caller
// goes away (its stdin closes: the session ended) ends, and its trigger
// with it.
func TestLogsScriptFollowCallerGone(t *testing.T) {
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: a follow has no trigger here (.ci/run's Debian has coreutils)")
	}
	for _, sh := range allShells {
		for _, what := range []string{"follow", "interactive", "wait for"} {
			t.Run(sh.name+"/"+what, func(t *testing.T) { testFollowCallerGone(t, sh, what) })
		}
	}
}

func testFollowCallerGone(t *testing.T, sh shell, what string) {
	sh.path(t)
	t.Parallel()
	root := filepath.Join(t.TempDir(), "root")
	job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
	target := shellgen.Target{Root: root, Workspace: "w"}
	var (
		script string
		err    error
	)
	switch what {
	case "wait for":
		script, err = shellgen.WaitForScript(target, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "never"})
	default:
		script, err = shellgen.LogsScript(target, shellgen.Logs{Ref: job.Meta.ID, Follow: true, Interactive: what == "interactive"})
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := sh.command(t, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(job.Path, "stdout.log")
	if !eventually(10*time.Second, func() bool { return len(readers(log)) > 0 }) {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("the %s never started its trigger (tail -f)", what)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the %s went on after its caller went away", what)
	}
	if !eventually(5*time.Second, func() bool { return len(readers(log)) == 0 }) {
		t.Errorf("processes left reading %s after the caller went away: %v", log, readers(log))
	}
}

// waiting starts script under sh as a runtime does, its stdin open (its
// caller is there), and returns its output and a func that waits for it
// to end, failing the test after 30 s (what says what was waited for).
func waiting(t *testing.T, sh shell, script string) (*bytes.Buffer, func(what string)) {
	t.Helper()
	cmd := sh.command(t, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &out, func(what string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("it went on: %s", what)
		}
	}
}

// TestWaitForScriptWakes: a wait --for on a running job finds a line
// written after it began, woken by its trigger (tail -f) where tail is
// GNU's, and leaves no process of it behind.
func TestWaitForScriptWakes(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
			script, err := shellgen.WaitForScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "^READY", Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out, ended := waiting(t, sh, script)
			log := filepath.Join(job.Path, "stdout.log")
			if gnu := gnuTail(); !eventually(10*time.Second, func() bool { return (len(readers(log)) > 0) == gnu }) {
				t.Errorf("trigger seen: %v, want %v (GNU tail)", !gnu, gnu)
			}
			f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("not yet\nREADY at last\n")
			f.Close()
			ended("the wait did not see the line")
			if !strings.Contains(out.String(), "READY at last\n") || strings.Contains(out.String(), "W\t") {
				t.Errorf("output %q: want the matching line and no W record", out.String())
			}
			if !eventually(5*time.Second, func() bool { return len(readers(log)) == 0 }) {
				t.Errorf("processes left reading %s after the wait: %v", log, readers(log))
			}
		})
	}
}

// TestWaitScriptWakes: a wait on a running job sees it end, woken by its
// trigger (tail -F on exit_code) where tail is GNU's, and leaves no
// process of it behind.
func TestWaitScriptWakes(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			script, err := shellgen.WaitScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Wait{Refs: []string{job.Meta.ID}, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out, ended := waiting(t, sh, script)
			code := filepath.Join(job.Path, "exit_code")
			if gnu := gnuTail(); !eventually(10*time.Second, func() bool { return (len(readers(code)) > 0) == gnu }) {
				t.Errorf("trigger seen: %v, want %v (GNU tail)", !gnu, gnu)
			}
			job.End(t, 7)
			ended("the wait did not see the job end")
			if !strings.Contains(out.String(), "\nJ\t") || strings.Contains(out.String(), "W\t") {
				t.Errorf("output %q: want the job's observation and no W record", out.String())
			}
			if !eventually(5*time.Second, func() bool { return len(readers(code)) == 0 }) {
				t.Errorf("processes left following %s after the wait: %v", code, readers(code))
			}
		})
	}
}

// TestLogsScriptEndedLogGrows: the last lines of a log that grows while
// it is read (an escapee of an ended job appends) are those of the log
// when its size was read, at their offsets: tail -n of the grown file
// started the range inside a line. Logs of 12 bytes and of 160 KiB (the
// lines are counted in a window of the file, widened until it holds
// them).
func TestLogsScriptEndedLogGrows(t *testing.T) {
	var long strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&long, "line %038d\n", i) // 44 bytes
	}
	for _, sh := range allShells {
		for _, tt := range []struct {
			name, log string
			tail      int
		}{
			{"short", "line1\nline2\n", 1},
			{"long, one line", long.String(), 1},
			{"long, 3,000 lines", long.String(), 3000},
		} {
			t.Run(sh.name+"/"+tt.name, func(t *testing.T) {
				sh.path(t)
				root := filepath.Join(t.TempDir(), "root")
				job := jobdirtest.Make(t, root, "w", jobdirtest.Job{Stdout: tt.log})
				log := filepath.Join(job.Path, "stdout.log")
				grown := filepath.Join(t.TempDir(), "grown")
				shadow(t, "tail", func(real string) string {
					return "[ -e " + grown + " ] || { : >" + grown + "; printf 'grown, a line longer than the others\\n' >>" + log + "; }\nexec " + real + " \"$@\"\n"
				})
				got, _ := runLogs(t, sh, root, shellgen.Logs{Ref: job.Meta.ID, Tail: tt.tail})
				lines := strings.SplitAfter(tt.log, "\n")
				lines = lines[:len(lines)-1]
				want := strings.Join(lines[len(lines)-tt.tail:], "")
				if len(got) != 1 {
					t.Fatalf("chunks %+v, want one", got)
				}
				if c := got[0]; c.Data != want || c.Offset != int64(len(tt.log)-len(want)) {
					t.Errorf("chunk at %d of %d bytes %.60q..., want the last %d lines of the log as it was: at %d, %d bytes", c.Offset, len(c.Data), c.Data, tt.tail, len(tt.log)-len(want), len(want))
				}
			})
		}
	}
}

// TestWaitsNeedNoTrigger: a wait, a wait --for and a follow that need no
// nap (the job has ended, the line is there) start no trigger: tail is
// neither asked its version nor started with -f or -F.
func TestWaitsNeedNoTrigger(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			target := shellgen.Target{Root: root, Workspace: "w"}
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{Stdout: "ready\n"})
			marker := filepath.Join(t.TempDir(), "asked")
			shadow(t, "tail", func(real string) string {
				return "case \" $* \" in *' -f '* | *' -F '* | *' --version '*) : >" + marker + " ;; esac\nexec " + real + " \"$@\"\n"
			})
			wait, err := shellgen.WaitScript(target, shellgen.Wait{Refs: []string{job.Meta.ID}, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			waitFor, err := shellgen.WaitForScript(target, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "^ready", Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			follow, err := shellgen.LogsScript(target, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			for name, script := range map[string]string{"wait": wait, "wait for": waitFor, "follow": follow} {
				os.Remove(marker)
				cmd := sh.command(t, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
				stdin, err := cmd.StdinPipe() // open: its caller is there
				if err != nil {
					t.Fatal(err)
				}
				out, err := cmd.Output()
				stdin.Close()
				if err != nil || !strings.Contains(string(out), shellgen.EndMarker) {
					t.Fatalf("%s: %v\n%s", name, err, out)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Errorf("%s of an ended job started its trigger", name)
				}
			}
		})
	}
}

// TestWaitsOnARemovedJob: a job whose directory goes away (bgjob rm,
// prune) while a wait, a wait --for or a follow looks at it is not
// found, as it would be by a look now: the wait said every job exited 0,
// wait --for that a job with no id ended without the line.
func TestWaitsOnARemovedJob(t *testing.T) {
	for _, sh := range allShells {
		for _, what := range []string{"wait", "wait for", "follow"} {
			t.Run(sh.name+"/"+what, func(t *testing.T) {
				sh.path(t)
				t.Parallel()
				root := filepath.Join(t.TempDir(), "root")
				target := shellgen.Target{Root: root, Workspace: "w"}
				job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
				var (
					script string
					err    error
				)
				switch what {
				case "wait":
					script, err = shellgen.WaitScript(target, shellgen.Wait{Refs: []string{job.Meta.ID}, Timeout: time.Minute})
				case "wait for":
					script, err = shellgen.WaitForScript(target, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "never", Timeout: time.Minute})
				default:
					script, err = shellgen.LogsScript(target, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
				}
				if err != nil {
					t.Fatal(err)
				}
				out, ended := waiting(t, sh, script)
				time.Sleep(300 * time.Millisecond) // it is waiting
				if err := os.Rename(job.Path, filepath.Join(t.TempDir(), "elsewhere")); err != nil {
					t.Fatal(err)
				}
				ended("the job was removed")
				if !strings.Contains(out.String(), "E\tnotfound\t"+job.Meta.ID+"\n") {
					t.Errorf("output %q: want E notfound %s", out.String(), job.Meta.ID)
				}
			})
		}
	}
}

// TestWaitForScriptAnyDD: where GNU tail comes with a dd that has no
// byte offsets (BSD's), a wait --for woken by its trigger still reads
// the lines it matches: it read them with that dd, which refused, and
// missed the line.
func TestWaitForScriptAnyDD(t *testing.T) {
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: no trigger here (.ci/run's Debian has coreutils)")
	}
	shadow(t, "dd", func(real string) string {
		return "for a; do case $a in iflag=*) echo 'dd: unknown operand iflag' >&2; exit 1 ;; esac; done\nexec " + real + " \"$@\"\n"
	})
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
			script, err := shellgen.WaitForScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "^READY", Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out, ended := waiting(t, sh, script)
			log := filepath.Join(job.Path, "stdout.log")
			if !eventually(10*time.Second, func() bool { return len(readers(log)) > 0 }) {
				t.Fatal("the trigger (tail -f) never started")
			}
			f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("READY now\n")
			f.Close()
			time.Sleep(500 * time.Millisecond)
			job.End(t, 0)
			ended("the job ended")
			if !strings.Contains(out.String(), "READY now\n") || strings.Contains(out.String(), "W\tended") {
				t.Errorf("output %q: want the matching line", out.String())
			}
		})
	}
}

// TestFollowKilledAtItsFIFO: a follow whose caller goes away while it
// makes its trigger's FIFO (between mkfifo and rm, here a mkfifo that
// then takes its time) leaves no FIFO behind, and one left by a script
// that was killed there (its pid gone) is removed by the next.
func TestFollowKilledAtItsFIFO(t *testing.T) {
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: no trigger here (.ci/run's Debian has coreutils)")
	}
	shadow(t, "mkfifo", func(real string) string { return real + " \"$@\" && exec sleep 30\n" })
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			tmp := t.TempDir()
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			stale := filepath.Join(tmp, "bgjob-wake.999999999") // above any pid_max
			if err := syscall.Mkfifo(stale, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", script)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // it leads its group, as runtimes start scripts
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			fifos := func() []string { m, _ := filepath.Glob(filepath.Join(tmp, "bgjob-wake.*")); return m }
			if !eventually(10*time.Second, func() bool { f := fifos(); return len(f) > 0 && !slices.Contains(f, stale) }) {
				stdin.Close()
				cmd.Wait()
				t.Fatal("the follow never made its FIFO, or kept the stale one")
			}
			stdin.Close() // the caller goes away
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatal("the follow went on after its caller went away")
			}
			if left := fifos(); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// shadow puts first on PATH (t.Setenv) a script named name, whose body is
// what body returns given the real name's path; it returns the script's
// directory.
func shadow(t *testing.T, name string, body func(real string) string) string {
	t.Helper()
	real, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body(real)), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

// TestLogsScriptLogNotAFile: a log that is gone, a directory, a link or a
// FIFO (none of which bgjob makes) is an E io record naming it, at once,
// for a read and a wait --for alike: the read printed the shell's errors,
// followed the link, or hung on the FIFO; the wait --for did so too, and
// waited on for the job's end.
func TestLogsScriptLogNotAFile(t *testing.T) {
	for _, sh := range allShells {
		for _, tt := range []struct {
			name string
			make func(path string) error
		}{
			{"gone", os.Remove},
			{"a directory", func(p string) error { os.Remove(p); return os.Mkdir(p, 0o700) }},
			{"a link", func(p string) error { os.Remove(p); return os.Symlink("/etc/hostname", p) }},
			{"a FIFO", func(p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o600) }},
		} {
			for _, reader := range logReaders {
				t.Run(sh.name+"/"+tt.name+"/"+reader.name, func(t *testing.T) {
					sh.path(t)
					root := filepath.Join(t.TempDir(), "root")
					job := jobdirtest.Make(t, root, "w", jobdirtest.Job{Stdout: "out\n", Stderr: "err\n"})
					if err := tt.make(filepath.Join(job.Path, "stdout.log")); err != nil {
						t.Fatal(err)
					}
					script, err := reader.script(shellgen.Target{Root: root, Workspace: "w"}, job.Meta.ID)
					if err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					cmd := exec.CommandContext(ctx, sh.path(t), append(sh.argv[1:], "-c", script)...)
					present(t, cmd)
					// A read hung on the FIFO holds stderr open after the
					// shell is killed.
					cmd.WaitDelay = time.Second
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						t.Fatalf("%v\n%s", err, stderr.Bytes())
					}
					if want := "E\tio\tthe stdout.log of job " + job.Meta.ID + " is missing or not a regular file\n"; !strings.Contains(string(out), want) || stderr.Len() > 0 {
						t.Errorf("output %q, stderr %q; want %q and no stderr", out, stderr.Bytes(), want)
					}
				})
			}
		}
	}
}

// logReaders are the scripts that read a job's logs: a read (the last 10
// lines), a follow and a wait --for.
var logReaders = []struct {
	name   string
	script func(t shellgen.Target, ref string) (string, error)
}{
	{"read", func(t shellgen.Target, ref string) (string, error) {
		return shellgen.LogsScript(t, shellgen.Logs{Ref: ref, Tail: 10})
	}},
	{"follow", func(t shellgen.Target, ref string) (string, error) {
		return shellgen.LogsScript(t, shellgen.Logs{Ref: ref, Follow: true})
	}},
	{"wait for", func(t shellgen.Target, ref string) (string, error) {
		return shellgen.WaitForScript(t, shellgen.WaitFor{Ref: ref, Pattern: "never", Timeout: time.Minute})
	}},
}

// TestLogsScriptJobRemovedAtItsSize: a job removed just as a read, a
// follow or a wait --for takes the size of its log is not found: the read
// went on with no size, and busybox sh died on the arithmetic (exit status
// 2, no end marker); the wait --for went on looking until the job was
// seen to end, and printed the shell's errors.
func TestLogsScriptJobRemovedAtItsSize(t *testing.T) {
	for _, sh := range allShells {
		for _, reader := range logReaders {
			t.Run(sh.name+"/"+reader.name, func(t *testing.T) {
				sh.path(t)
				root := filepath.Join(t.TempDir(), "root")
				job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
				// The removal comes as wc runs, after the shell opened nothing
				// (wc prints no size, as for a log that is gone).
				elsewhere := filepath.Join(t.TempDir(), "elsewhere")
				shadow(t, "wc", func(string) string {
					return "mv " + job.Path + " " + elsewhere + " 2>/dev/null\nexit 1\n"
				})
				script, err := reader.script(shellgen.Target{Root: root, Workspace: "w"}, job.Meta.ID)
				if err != nil {
					t.Fatal(err)
				}
				cmd := sh.command(t, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
				present(t, cmd)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr.Bytes())
				}
				if want := "E\tnotfound\t" + job.Meta.ID + "\n"; !strings.Contains(string(out), want) || stderr.Len() > 0 {
					t.Errorf("output %q, stderr %q; want %q and no stderr", out, stderr.Bytes(), want)
				}
			})
		}
	}
}
