package proc

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenIsOutsideThePoller: Open reads what os.Open reads, and
// its files are not in Go's poller, even a FIFO, which os.Open puts there
// (no read deadline can be set on them).
func TestOpenIsOutsideThePoller(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("read %q, %v; want %q", b, err, "one\ntwo\n")
	}
	if _, err := Open(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file not there: %v, want fs.ErrNotExist", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A writer first, so that neither open waits.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if f, err := os.Open(fifo); err != nil {
		t.Fatal(err)
	} else {
		err := f.SetReadDeadline(time.Time{})
		f.Close()
		if err != nil {
			t.Fatalf("os.Open's FIFO: %v; the test expects it in the poller", err)
		}
	}
	r, err := Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SetReadDeadline(time.Time{}); !errors.Is(err, os.ErrNoDeadline) {
		t.Errorf("Open's FIFO: SetReadDeadline: %v, want os.ErrNoDeadline (outside the poller)", err)
	}
	if _, err := w.WriteString("x\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "x\n" {
		t.Errorf("read %q, %v from the FIFO", buf[:n], err)
	}
}
