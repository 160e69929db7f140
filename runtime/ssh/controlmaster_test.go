package ssh_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/runtime/ssh"
)

// A Runtime closed while a script's session is still open over a
// ControlMaster socket leaves the master running. bgjob closes once a
// script has printed all it reports, which can be before the script's exit
// status reaches the master; OpenSSH 9.2p1's master then got the exit
// status for a client that had gone and died of SIGSEGV, and every later
// "ssh -S" and bgjob verb silently made a connection of its own (the
// ControlMaster benchmark measured new connections for a day).
func TestCloseLeavesControlMasterRunning(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		testneed.Missing(t, "the ssh client (openssh-client)")
	}
	e := newEnv(t)
	e.startMaster(t)
	check := func() error { return exec.Command("ssh", "-F", e.cfg, "-O", "check", "target").Run() }
	if err := check(); err != nil {
		t.Fatalf("ssh -O check before the test: %v", err)
	}

	// Each script's output ends (EOF on the channel) well before its exit
	// status is sent, and the next client is there when it is.
	const rounds = 10
	for i := 0; i < rounds; i++ {
		r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
		if !ssh.UsedControlMaster(r) {
			t.Fatalf("round %d: Dial did not use the ControlMaster socket", i)
		}
		printed := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go r.Exec(ctx, "printf ready; exec >/dev/null 2>&1; sleep 0.2", nil, &signalWriter{c: printed})
		select {
		case <-printed:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: script did not print", i)
		}
		r.Close()
	}

	// sshd logs a session's close once the master has passed on the exit
	// status and answered the close, or once the master's connection is
	// gone: either way the master has met the late messages.
	if !eventually(20*time.Second, func() bool {
		b, _ := os.ReadFile(e.srv.LogPath)
		return strings.Count(string(b), "Close session") >= rounds
	}) {
		t.Fatal("sshd never closed the sessions")
	}
	if err := check(); err != nil {
		t.Errorf("the ControlMaster is gone after a Runtime closed with a session open (ssh -O check: %v)", err)
	}
}

// eventually polls cond until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
