package sshtest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
)

// TestFleetHosts: each host of a fleet has its own hostname, /proc and
// /tmp; a killed host refuses connections and leaves no process; a
// restarted one answers again.
func TestFleetHosts(t *testing.T) {
	f := sshtest.StartFleet(t, 3)
	cfg, err := f.WriteClientConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range f.Hosts {
		out, err := sshRun(t, cfg, h.Name, "hostname; echo $$ >/tmp/mark; cat /proc/1/comm; ls /tmp")
		if err != nil {
			t.Fatalf("%s: %v: %s", h.Name, err, out)
		}
		if want := h.Name + "\nsshd\nmark\n"; out != want {
			t.Errorf("%s: got %q, want %q", h.Name, out, want)
		}
		if _, err := os.Stat(filepath.Join(h.Root(), "tmp", "mark")); err != nil {
			t.Errorf("%s: its /tmp/mark is not under Root(): %v", h.Name, err)
		}
	}
	n2 := f.Hosts[1]
	// A session that holds a process on the host while it is killed.
	sleeper := exec.Command("ssh", "-F", cfg, n2.Name, "sleep 60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	if !eventually(10*time.Second, func() bool { return strings.Contains(fmt.Sprint(n2.Procs()), "sleep 60") }) {
		t.Fatalf("no process on %s while a session runs sleep", n2.Name)
	}
	procs := n2.Procs()
	if err := n2.Kill(); err != nil {
		t.Fatal(err)
	}
	sleeper.Wait()
	for pid, cmd := range procs {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(b) > 0 {
			t.Errorf("process %d (%s) of the killed host lives on", pid, cmd)
		}
	}
	if out, err := sshRun(t, cfg, n2.Name, "true"); err == nil || !strings.Contains(out, "refused") {
		t.Errorf("killed host: %v %q, want connection refused", err, out)
	}
	if err := n2.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := sshRun(t, cfg, n2.Name, "ls /tmp"); err != nil || out != "" {
		t.Errorf("restarted host: %v %q, want a fresh, empty /tmp", err, out)
	}
}

// eventually reports whether cond holds within d, checking every 20ms.
func eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
