// Package pidreuse starts, in tests, a process with a pid chosen by the
// test: one a process bgjob (or a test server) started used and gave up,
// to check that nothing signals the new owner of a reused pid.
package pidreuse

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/testneed"
)

// Start starts `sleep 600` with pid pid, which must be free, by writing
// pid-1 to /proc/sys/kernel/ns_last_pid (root) before the fork; other
// processes of the machine may fork in between, so it tries again. It
// ends t when it cannot (as testneed.Missing when ns_last_pid cannot be
// written). The process is killed when the test ends.
func Start(t testing.TB, pid int) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		testneed.Missing(t, "root, to choose the next pid (/proc/sys/kernel/ns_last_pid)")
	}
	// The path found once: the fork follows the write at once.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// Other processes fork in bursts (the other test packages beside
	// this one), and the pid may still be held (a process not yet
	// reaped): tries are made for up to a minute, pausing while the pid
	// is held.
	const tries = 1000
	deadline := time.Now().Add(time.Minute)
	for try := 0; try < tries || time.Now().Before(deadline); try++ {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			testneed.Missing(t, "a writable /proc/sys/kernel/ns_last_pid: %v", err)
		}
		c := exec.Command(sleep, "600")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.Process.Pid == pid {
			t.Cleanup(func() { c.Process.Kill() })
			return c
		}
		c.Process.Kill()
		c.Wait()
	}
	t.Fatalf("could not give a process pid %d in %d tries and a minute", pid, tries)
	return nil
}
