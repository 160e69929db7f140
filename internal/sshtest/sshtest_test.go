package sshtest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/pidreuse"
	"github.com/bgjob/bgjob/internal/sshtest"

	"github.com/bgjob/bgjob/internal/testneed"
)

// sshRun runs the OpenSSH client with cfg against alias.
func sshRun(t *testing.T, cfg, alias string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		testneed.Missing(t, "the ssh client (openssh-client)")
	}
	cmd := exec.Command("ssh", append([]string{"-F", cfg, "-o", "BatchMode=yes", alias}, args...)...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestServerAcceptsClientKey(t *testing.T) {
	s := sshtest.Start(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := s.WriteConfig(cfg, "test"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteKnownHosts(filepath.Join(dir, "known_hosts"), true, "ssh-ed25519"); err != nil {
		t.Fatal(err)
	}
	out, err := sshRun(t, cfg, "test", "echo", "hello")
	if err != nil || strings.TrimSpace(out) != "hello" {
		t.Fatalf("ssh: %v: %q\nsshd log:\n%s", err, out, s.Log())
	}
}

func TestRestartKeepsConnectionsAndPort(t *testing.T) {
	s := sshtest.Start(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := s.WriteConfig(cfg, "test"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	// A session that outlives the restart: it prints after the restart.
	cmd := exec.Command("ssh", "-F", cfg, "-o", "BatchMode=yes", "test", "read x; echo after-$x")
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	stdin, _ := cmd.StdinPipe()
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		testneed.Missing(t, "the ssh client (openssh-client)")
	}
	// Wait until the session is up: sshd logs the accepted key.
	for i := 0; i < 500 && !strings.Contains(s.Log(), "Accepted publickey"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("restart\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil || strings.TrimSpace(out.String()) != "after-restart" {
		t.Fatalf("session across restart: %v: %q", err, out.String())
	}
	if o, err := sshRun(t, cfg, "test", "true"); err != nil {
		t.Fatalf("new connection after restart: %v: %s", err, o)
	}
}

// TestCloseSignalsNoReusedPID: Close signals the connection processes a
// Restart left, and those that have ended since have given up their pids,
// which the kernel hands out again. A process that got one of them is not
// the server's: Close must leave it alone. The test gives a victim such a
// pid (ns_last_pid, root only) and checks that it outlives Close.
func TestCloseSignalsNoReusedPID(t *testing.T) {
	if os.Geteuid() != 0 {
		testneed.Missing(t, "root, to choose the next pid (/proc/sys/kernel/ns_last_pid)")
	}
	s := sshtest.Start(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := s.WriteConfig(cfg, "test"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	before := sshdChildren(t, s)
	cmd := exec.Command("ssh", "-F", cfg, "-o", "BatchMode=yes", "test", "read x")
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		testneed.Missing(t, "the ssh client (openssh-client)")
	}
	for i := 0; i < 500 && !strings.Contains(s.Log(), "Accepted publickey"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	var conn []int
	for _, pid := range sshdChildren(t, s) {
		if !slices.Contains(before, pid) {
			conn = append(conn, pid)
		}
	}
	if len(conn) == 0 {
		t.Fatal("no sshd process serves the connection")
	}
	// The connection's process becomes an orphan of the stopped listener,
	// then ends with its session.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("end\n"))
	stdin.Close()
	cmd.Wait()
	for _, pid := range conn {
		for i := 0; i < 500 && exists(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if exists(pid) {
			t.Fatalf("the connection's process %d did not end with its session", pid)
		}
	}
	victim := pidreuse.Start(t, conn[0])
	done := make(chan error, 1)
	go func() { done <- victim.Wait() }()
	s.Close()
	select {
	case err := <-done:
		t.Fatalf("Close signalled pid %d, which is no longer the server's: the victim ended: %v", conn[0], err)
	case <-time.After(500 * time.Millisecond):
	}
	victim.Process.Kill()
	<-done
}

// sshdChildren lists the processes whose parent is the listening sshd.
func sshdChildren(t *testing.T, s *sshtest.Server) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "sshd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	ppid := strings.TrimSpace(string(b))
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		if f := strings.Fields(string(b[i+1:])); len(f) > 1 && f[1] == ppid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// exists reports whether pid names a process (a zombie too).
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
