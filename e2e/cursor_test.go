package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
)

// endedJob runs command to its end and returns its id and the path of its
// stdout.log (the SSH host is this machine, so the file is here too).
func endedJob(t *testing.T, flags []string, command string) (string, string) {
	t.Helper()
	ctx := context.Background()
	code, out, errs := bgjob(ctx, append(flags, "run", "-q", "--", command)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	if code, _, errs := bgjob(ctx, append(flags, "wait", id)...); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errs)
	}
	root := flags[slices.Index(flags, "--root")+1]
	return id, filepath.Join(root, "default", id, "stdout.log")
}

// readNew reads what is new for the default reader, without a cap, and
// checks that it is the end of the log: it returns where it started.
func readNew(t *testing.T, flags []string, id string, log []byte) int {
	t.Helper()
	code, out, errs := bgjob(context.Background(), append(flags, "logs", "--new", "--max-bytes", "0", id)...)
	if code != 0 {
		t.Fatalf("logs --new: exit %d: %s", code, errs)
	}
	if !bytes.HasSuffix(log, []byte(out)) {
		t.Fatalf("logs --new printed %d bytes that are not the end of the log", len(out))
	}
	return len(log) - len(out)
}

// TestCursorReaderGone: logs --new whose stdout is gone before it writes a
// byte (the reader of `| head -c 100` that has left) delivered nothing,
// so its cursor stays: the next read prints everything. It printed nothing
// when the script moved the cursor over what it sent.
func TestCursorReaderGone(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			id, path := endedJob(t, tc.flags, "seq 1 9000")
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			pr.Close()
			cmd := exec.Command(bin, append(tc.flags, "logs", "--new", id)...)
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			cmd.Stdout = pw
			err = cmd.Run()
			pw.Close()
			if err == nil {
				t.Fatal("logs --new to a closed pipe succeeded: the test proves nothing")
			}
			log, _ := os.ReadFile(path)
			if from := readNew(t, tc.flags, id, log); from != 0 {
				t.Errorf("after a reader that got nothing, the next read starts at %d of %d: the bytes before are lost", from, len(log))
			}
		})
	}
}

// TestCursorReaderTookPart: logs --new into a pipe moves the cursor over
// what its reader read, not over what it wrote: a reader that reads 100
// bytes and goes (`| head -c 100`) leaves the rest for the next read,
// locally and over SSH, though every byte fitted in the pipe and was
// written; one that reads slowly but wholly leaves nothing; with --json
// a document read in part moves the cursor over nothing. The cursor used
// to move over all that fitted in the pipe: the next read printed 0 bytes.
func TestCursorReaderTookPart(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	// read runs logs --new with stdout a pipe of which take reads what
	// it reads before closing it, and returns how much it read.
	read := func(t *testing.T, args []string, take func(io.Reader) int) int {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		cmd.Stdout = pw
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		n := take(pr)
		pr.Close()
		if err := cmd.Wait(); err != nil && errb.Len() > 0 {
			t.Fatalf("logs --new: %v: %s", err, errb.String())
		}
		return n
	}
	head := func(r io.Reader) int {
		n, err := io.ReadFull(r, make([]byte, 100))
		if err != nil {
			t.Errorf("the reader got %d bytes: %v", n, err)
		}
		return n
	}
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			id, path := endedJob(t, tc.flags, "seq 1 9000")
			log, _ := os.ReadFile(path)
			if len(log) != 43893 {
				t.Fatalf("the log holds %d bytes, want 43893", len(log))
			}
			got := read(t, append(tc.flags, "logs", "--new", id), head)
			if from := readNew(t, tc.flags, id, log); from != got {
				t.Errorf("the reader read %d bytes and went; the next read starts at %d", got, from)
			}

			id, path = endedJob(t, tc.flags, "seq 1 9000")
			log, _ = os.ReadFile(path)
			got = read(t, append(tc.flags, "logs", "--new", id), func(r io.Reader) int {
				time.Sleep(300 * time.Millisecond)
				n, _ := io.Copy(io.Discard, r)
				return int(n)
			})
			if got != len(log) {
				t.Fatalf("the slow reader read %d bytes of %d", got, len(log))
			}
			if from := readNew(t, tc.flags, id, log); from != len(log) {
				t.Errorf("the slow reader read all %d bytes; the next read starts at %d", len(log), from)
			}

			id, path = endedJob(t, tc.flags, "seq 1 9000")
			log, _ = os.ReadFile(path)
			read(t, append(tc.flags, "logs", "--new", "--json", id), head)
			if from := readNew(t, tc.flags, id, log); from != 0 {
				t.Errorf("the reader read 100 bytes of the JSON document and went; the next read starts at %d, want 0", from)
			}
		})
	}
}

// cutRead runs logs --new --max-bytes 0 of job id in a process of its own,
// takes 8 MB of its output, then calls cut while the reader is still
// writing, and reads what else it writes until it ends. It returns how
// many bytes the reader wrote.
func cutRead(t *testing.T, flags []string, id string, cut func(*exec.Cmd)) int {
	t.Helper()
	cmd := exec.Command(bgjobBinary(t), append(flags, "logs", "--new", "--max-bytes", "0", id)...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyN(io.Discard, out, 8_000_000)
	if err != nil {
		t.Fatalf("the reader ended after %d bytes: %v: %s", n, err, errb.String())
	}
	cut(cmd)
	rest, _ := io.Copy(io.Discard, out)
	err = cmd.Wait()
	if err == nil {
		t.Fatalf("the reader ended well after %d bytes: the cut came too late to prove anything", n+rest)
	}
	return int(n + rest)
}

// checkCut checks the read after a reader cut short that wrote got
// bytes: it starts at or before got (nothing lost) and repeats at most
// dup bytes.
func checkCut(t *testing.T, flags []string, id, path string, got, dup int) {
	t.Helper()
	log, _ := os.ReadFile(path)
	if got >= len(log) {
		t.Fatalf("the reader wrote all %d bytes before it was cut", got)
	}
	from := readNew(t, flags, id, log)
	if from > got {
		t.Errorf("the reader wrote %d bytes and the next read starts at %d: %d bytes lost", got, from, from-got)
	}
	if got-from > dup {
		t.Errorf("the reader wrote %d bytes and the next read starts at %d: %d bytes again, want at most %d", got, from, got-from, dup)
	}
}

// A large log: 22,888,896 bytes, the size of the repro.
const bigLog = "seq 1 3000000"

// TestCursorKilledMidRead: logs --new killed (SIGKILL) in the middle of a
// 23 MB read, locally and over SSH, moved the cursor over at most what it
// wrote, and over all of it but what it wrote since its last report. The
// script used to move the cursor to the end of the range once its reader
// was gone.
func TestCursorKilledMidRead(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, path := endedJob(t, tc.flags, bigLog)
			got := cutRead(t, tc.flags, id, func(cmd *exec.Cmd) { cmd.Process.Kill() })
			// Reports go every 256 KiB; over SSH those still in flight
			// when the connection dies are lost too.
			dup := 1 << 20
			if tc.name == "ssh" {
				dup = 4 << 20
			}
			checkCut(t, tc.flags, id, path, got, dup)
		})
	}
}

// TestCursorInterrupted: Ctrl-C (SIGINT) in the middle of a 23 MB read
// reports what its reader had read before the script is ended, so the next
// read repeats at most the write under way (32 KiB) and what the pipe held
// unread (64 KiB), which this reader reads after the Ctrl-C. It used to
// repeat everything: the cursor did not move at all.
func TestCursorInterrupted(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, path := endedJob(t, tc.flags, bigLog)
			got := cutRead(t, tc.flags, id, func(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGINT) })
			checkCut(t, tc.flags, id, path, got, 96<<10)
		})
	}
}

// TestCursorInterruptedLive: Ctrl-C while logs --new of a running job
// writes to a slow reader repeats at most a write (32 KiB) and what the
// pipe held (64 KiB). A running job's range goes out in pieces of up to
// 1 MiB, each held until its check record, then written in one call, which
// went on after the Ctrl-C: the reader got the whole MiB and the cursor
// stayed where it was, so a loop of interrupted reads never moved on.
func TestCursorInterruptedLive(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			code, out, errs := bgjob(ctx, append(tc.flags, "run", "-q", "--", `awk 'BEGIN { for (i = 0; i < 400000; i++) printf "%09d\n", i }'; echo done >&2; sleep 60`)...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			id := strings.TrimSpace(out)
			root := tc.flags[slices.Index(tc.flags, "--root")+1]
			path := filepath.Join(root, "default", id, "stdout.log")
			if !eventually(30*time.Second, func() bool {
				b, _ := os.ReadFile(filepath.Join(root, "default", id, "stderr.log"))
				return len(b) > 0
			}) {
				t.Fatal("the job did not write its output")
			}
			cmd := exec.Command(bgjobBinary(t), append(tc.flags, "logs", "--new", "--stdout", "--max-bytes", "0", id)...)
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			r, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A slow reader: 4 KiB every 4 ms.
			got := 0
			buf := make([]byte, 4096)
			signalled := false
			start := time.Now()
			for {
				n, err := r.Read(buf)
				got += n
				if err != nil {
					break
				}
				if !signalled && time.Since(start) > 300*time.Millisecond {
					cmd.Process.Signal(syscall.SIGINT)
					signalled = true
				}
				time.Sleep(4 * time.Millisecond)
			}
			cmd.Wait()
			if !signalled {
				t.Fatalf("the read ended after %d bytes before the Ctrl-C", got)
			}
			checkCut(t, tc.flags, id, path, got, 96<<10)
		})
	}
}

// TestCursorConnectionDropped: an SSH connection dropped in the middle of a
// 23 MB read (the repro: 2.5 MB received, the cursor at the end)
// leaves the cursor at most where the received bytes end.
func TestCursorConnectionDropped(t *testing.T) {
	t.Parallel()
	srv, _, flags := sshJobs(t)
	id, path := endedJob(t, flags, bigLog)
	got := cutRead(t, flags, id, func(*exec.Cmd) { dropSSH(t, srv) })
	checkCut(t, flags, id, path, got, 4<<20)
}

// dropSSH kills every sshd process serving a connection, and restarts
// sshd.
func dropSSH(t *testing.T, srv *sshtest.Server) {
	t.Helper()
	if n := srv.DropConnections(); n == 0 {
		t.Fatal("no sshd process served a connection: nothing was dropped")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
}

// TestCursorHeadLeavesTheRest: `logs --new --max-bytes 0 | head -c 30`,
// again and again, moves the cursor 30 bytes each time: the reader went
// mid-read, and its last report is in the cursor before bgjob exits (a
// read made in Go used to exit before, about 40% of the time, and the
// next read sent the bytes again).
func TestCursorHeadLeavesTheRest(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	flags := []string{"--root", root}
	ctx := context.Background()
	code, out, errs := bgjob(ctx, append(flags, "run", "-q", "--", "seq 1 300000; sleep 60")...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	log := filepath.Join(root, "default", id, "stdout.log")
	deadline := time.Now().Add(time.Minute)
	for b, _ := os.ReadFile(log); !bytes.HasSuffix(b, []byte("\n300000\n")); b, _ = os.ReadFile(log) {
		if time.Now().After(deadline) {
			t.Fatal("the job did not write its log")
		}
		time.Sleep(50 * time.Millisecond)
	}
	bin := bgjobBinary(t)
	for i := 1; i <= 8; i++ {
		sh := exec.Command("sh", "-c", `"$0" --root "$1" logs --new --max-bytes 0 "$2" | head -c 30 >/dev/null`, bin, root, id)
		if b, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("read %d: %v: %s", i, err, b)
		}
		b, err := os.ReadFile(filepath.Join(root, "default", id, "cursor-default.stdout"))
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		off, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if want := strconv.Itoa(30 * i); off != want {
			t.Fatalf("read %d: the cursor is at %s, want %s", i, off, want)
		}
	}
}

// TestCursorPlainHeadLosesNothing: `logs --new --plain | head -c 100`
// leaves every line it did not take for the next read: the pipe holds
// text, shorter than the log bytes it came from, so its unread bytes do
// not measure log bytes (the cursor used to move past lines 14 to 903).
func TestCursorPlainHeadLosesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	flags := []string{"--root", root}
	id, _ := endedJob(t, flags, `i=1; while [ $i -le 2000 ]; do printf "\033[31mline %d\033[0m\n" $i; i=$((i+1)); done`)
	sh := exec.Command("sh", "-c", `"$0" --root "$1" logs --new --plain "$2" | head -c 100 >/dev/null`, bgjobBinary(t), root, id)
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the partial read: %v: %s", err, b)
	}
	code, out, errs := bgjob(context.Background(), append(flags, "logs", "--new", "--plain", "--max-bytes", "0", id)...)
	if code != 0 {
		t.Fatalf("the next read: exit %d: %s", code, errs)
	}
	for _, line := range []string{"line 14\n", "line 500\n", "line 903\n", "line 2000\n"} {
		if !strings.Contains(out, line) {
			t.Fatalf("the read after a reader that took 100 bytes lacks %q", line)
		}
	}
}
