package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// row returns the line of the job named name on top's screen, its fields
// joined by one space ("" when it does not show).
func (m *tmuxTerm) row(name string) string {
	for _, l := range strings.Split(m.screen(), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// waitRow waits until the row of the job named name shows want.
func (m *tmuxTerm) waitRow(name, want string) {
	m.t.Helper()
	if !eventually(screenWait, func() bool { return strings.Contains(m.row(name), want) }) {
		m.t.Fatalf("the row of %s never showed %q:\n%s", name, want, m.screen())
	}
}

// TestTopProcesses, in a real terminal: top, left alone, shows what
// changes while no file of the job does: a running job's live processes
// (two more once it reads a line from a FIFO), its end when its wrapper is
// killed with KILL (lost, its processes counted on), and the process an
// ended job left running (an escapee started with setsid), and its end.
// top reads its jobs again by a clock and a look at the wrappers, not on
// each tick: this is what that must not miss.
func TestTopProcesses(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	flags := []string{"--root", t.TempDir()}
	dir := t.TempDir()
	fifo, escPID := filepath.Join(dir, "fifo"), filepath.Join(dir, "escapee")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	grows := runJob(t, bin, flags, "-n", "grows", "--", "read x <"+fifo+"; sleep 600 & sleep 600 & wait")
	escapes := runJob(t, bin, flags, "-n", "escapes", "--", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! >"+escPID+"; exit 3")

	m := newTmux(t, topCmd(bin, flags, ""))
	m.waitRow("grows", grows+" running - 1 ")
	m.waitRow("escapes", escapes+" exited 3 1 ")

	// Two more processes: the shell goes on past its read.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	m.waitRow("grows", grows+" running - 3 ")

	// The wrapper killed: no exit_code is written.
	j := jobStatus(t, bin, flags, grows)
	if err := syscall.Kill(j.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m.waitRow("grows", grows+" lost - 3 ")
	if _, err := os.Stat(filepath.Join(j.Dir, "exit_code")); err == nil {
		t.Fatal("the wrapper killed with KILL wrote exit_code: this test no longer tests an end without a file event")
	}
	syscall.Kill(-j.PGID, syscall.SIGKILL)
	m.waitRow("grows", grows+" lost - 0 ")

	// The escapee ends.
	b, err := os.ReadFile(escPID)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m.waitRow("escapes", escapes+" exited 3 0 ")
	m.keys("q")
	m.waitFor("[exited 0]")
}
