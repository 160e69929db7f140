package sshtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
