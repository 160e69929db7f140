package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir"
	ctr "github.com/bgjob/bgjob/runtime/container"
)

// TestContainerPTY: in a container of the PTY image (util-linux script)
// run --pty gives the job a terminal, logs --plain shows its output
// without the terminal's \r, send reaches a job reading its terminal, and
// a stop reports the signal that ended the job (143 for TERM, 137 for
// KILL), with nothing left running: through the daemon's API, and
// through --via and the engine's own command ("docker exec -i %h",
// "podman exec -i %h"), in a container of its own.
func TestContainerPTY(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		t.Run("api", func(t *testing.T) {
			t.Parallel()
			testContainerPTY(t, []string{"-H", d.RunPTY(t).Host()})
		})
		t.Run("via", func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(d.Engine); err != nil {
				testneed.Missing(t, "the %s command", d.Engine)
			}
			testContainerPTY(t, []string{"--via", d.Engine + " exec -i %h", "-H", d.RunPTY(t).Name})
		})
	})
}

// testContainerPTY is TestContainerPTY in the container g's flags reach.
func testContainerPTY(t *testing.T, g []string) {
	t.Helper()
	id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--pty", "--", `echo hello; [ -t 0 ] && [ -t 1 ] && echo "on $(tty)"; stty size; exit 3`)...))
	must(t, 3, append(g, "wait", id)...)
	plain := must(t, 0, append(g, "logs", "--plain", id)...)
	lines := strings.Split(plain, "\n")
	if len(lines) != 4 || lines[0] != "hello" || !strings.HasPrefix(lines[1], "on /dev/pts/") || lines[2] != "24 80" || lines[3] != "" {
		t.Errorf("logs --plain: %q, want hello, on /dev/pts/N, 24 80", plain)
	}
	if raw := must(t, 0, append(g, "logs", id)...); !strings.HasPrefix(raw, "hello\r\n") {
		t.Errorf("logs: %q, want the terminal's lines (\\r\\n)", raw)
	}
	if j := statusOf(t, g, id); j.Status != jobdir.StatusExited || !j.PTY {
		t.Errorf("status: %+v, want an exited --pty job", j)
	}

	rd := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--pty", "-n", "rd", "--", "echo ready; read x; echo got:$x")...))
	must(t, 0, append(g, "wait", "--for", "^ready", "--timeout", "30s", rd)...)
	must(t, 0, append(g, "send", "rd", "hi there\n")...)
	must(t, 0, append(g, "wait", "--timeout", "30s", rd)...)
	if out := must(t, 0, append(g, "logs", "--plain", rd)...); !strings.Contains("\n"+out, "\ngot:hi there\n") {
		t.Errorf("logs --plain after send: %q, want a line got:hi there", out)
	}

	for _, tc := range []struct {
		signal string
		code   int
	}{{"TERM", 143}, {"KILL", 137}} {
		id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--pty", "--", "echo ready; sleep 300")...))
		must(t, 0, append(g, "wait", "--for", "^ready", "--timeout", "30s", id)...)
		if j := statusOf(t, g, id); j.Status != jobdir.StatusRunning {
			t.Fatalf("before the stop: %+v, want running", j)
		}
		must(t, 0, append(g, "stop", "-s", tc.signal, id)...)
		must(t, tc.code, append(g, "wait", id)...)
		j := statusOf(t, g, id)
		if j.Status != jobdir.StatusKilled || j.ExitCode == nil || *j.ExitCode != tc.code || j.Reason != "stop" || j.Signal != tc.signal || j.LiveProcesses != 0 {
			t.Errorf("stop -s %s: %+v, want killed (stop) %d by %s, nothing left", tc.signal, j, tc.code, tc.signal)
		}
	}
}

// TestContainerLogCap: in a container of the PTY image (util-linux
// fallocate) run --max-log-size is accepted and caps the log: a job that
// writes 689 KB with a 64 KiB cap keeps at most 64 KiB of it, its end
// included, status counts the bytes dropped, and the file takes no more
// room on disk than the cap (the holes were punched).
func TestContainerLogCap(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.RunPTY(t)
		g := []string{"-H", c.Host()}
		const limit = 64 << 10
		id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--max-log-size", "64K", "--",
			`i=0; while [ $i -lt 20000 ]; do echo "line $i padding padding padding"; i=$((i+1)); done; echo done`)...))
		must(t, 0, append(g, "wait", id)...)
		out := must(t, 0, append(g, "logs", id)...)
		if len(out) > limit || !strings.HasSuffix(out, "line 19999 padding padding padding\ndone\n") {
			t.Errorf("logs: %d bytes ending %q, want at most %d ending in done", len(out), out[max(0, len(out)-60):], limit)
		}
		total := len("done\n")
		for i := range 20000 {
			total += len(fmt.Sprintf("line %d padding padding padding\n", i))
		}
		j := statusOf(t, g, id)
		if j.MaxLogSize != limit || j.StdoutDropped+int64(len(out)) != int64(total) {
			t.Errorf("status: cap %d, %d bytes dropped, %d kept; want the cap %d and the rest of %d bytes dropped", j.MaxLogSize, j.StdoutDropped, len(out), limit, total)
		}
		du := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "du -k "+j.StdoutPath)...))
		must(t, 0, append(g, "wait", du)...)
		f := strings.Fields(must(t, 0, append(g, "logs", du)...))
		if kib, err := strconv.Atoi(f[0]); err != nil || kib > 2*limit>>10 {
			t.Errorf("du -k of the log: %q, want at most %d KiB on disk", f, 2*limit>>10)
		}
	})
}

// TestContainerAttach, in a real terminal (tmux): attach to a --pty job in
// a container of the PTY image, type a line and read the answer on the
// screen, resize the window and read the job's new size, detach with
// Ctrl-\ (attach exits 0, the job runs on), attach again and end the job:
// attach exits with its status. Ctrl-C reaches a job that traps INT, twice,
// and attach goes on until --detach-key. (busybox's setsid, which the
// image has, once left the job's INT ignored.) Through the daemon's API,
// and with docker through --via ("docker exec -i %h").
func TestContainerAttach(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		t.Run("api", func(t *testing.T) {
			t.Parallel()
			testContainerAttach(t, bin, []string{"-H", d.RunPTY(t).Host()})
		})
		// Through --via with one engine's command: the other's reaches
		// the same streams (TestContainerPTY), and CI's time counts.
		if d.Engine != ctr.Docker {
			return
		}
		t.Run("via", func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(d.Engine); err != nil {
				testneed.Missing(t, "the %s command", d.Engine)
			}
			testContainerAttach(t, bin, []string{"--via", d.Engine + " exec -i %h", "-H", d.RunPTY(t).Name})
		})
	})
}

// testContainerAttach is TestContainerAttach in the container flags
// reach.
func testContainerAttach(t *testing.T, bin string, flags []string) {
	t.Helper()
	id := runJob(t, bin, flags, "--pty", "-n", "rl", "--", `echo ready; while read -r l; do [ "$l" = quit ] && exit 3; echo "got $l $(stty size)"; done`)
	m := newTmux(t, attachCmd(bin, flags, "rl"))
	m.waitFor("ready")
	m.keys("hello there", "Enter")
	m.waitFor("got hello there")

	m.tmux("resize-window", "-t", "s", "-x", "100", "-y", "30")
	// The resize reaches the job before the line typed after it:
	// look until the size shows.
	if !eventually(screenWait, func() bool {
		m.keys("size", "Enter")
		return eventually(2*time.Second, func() bool { return strings.Contains(m.screen(), "got size 30 100") })
	}) {
		t.Fatalf("the job never saw the window's new size 100x30:\n%s", m.screen())
	}

	m.keys(`C-\`)
	m.waitFor("[exited 0]")
	if !strings.Contains(m.screen(), "bgjob: detached from job "+id) {
		t.Errorf("no word of the detach on the screen:\n%s", m.screen())
	}
	if j := statusOf(t, flags, id); j.Status != jobdir.StatusRunning {
		t.Fatalf("after the detach the job is %s, want running", j.Status)
	}

	m2 := newTmux(t, attachCmd(bin, flags, id))
	m2.waitFor("got hello there") // the replay of the log's tail
	m2.keys("quit", "Enter")
	m2.waitFor("[exited 3]")
	if !strings.Contains(m2.screen(), "bgjob: job "+id+" exited 3") {
		t.Errorf("attach did not say how the job ended:\n%s", m2.screen())
	}
	if code, _, _ := bgjob(context.Background(), append(flags, "wait", id)...); code != 3 {
		t.Errorf("wait after the attach: %d, want 3", code)
	}

	intr := runJob(t, bin, flags, "--pty", "--", `trap 'echo "got INT"' INT; echo ready; while :; do sleep 1 & wait $!; done`)
	m3 := newTmux(t, attachCmd(bin, flags, "--detach-key", "ctrl-]", intr))
	m3.waitFor("ready")
	m3.keys("C-c")
	m3.waitFor("got INT")
	m3.keys("C-c")
	if !eventually(screenWait, func() bool { return strings.Count(m3.screen(), "got INT") == 2 }) {
		t.Fatalf("the second Ctrl-C did not reach the job:\n%s", m3.screen())
	}
	m3.keys("C-]")
	m3.waitFor("[exited 0]")
	if j := statusOf(t, flags, intr); j.Status != jobdir.StatusRunning {
		t.Fatalf("after Ctrl-C and the detach the job is %s, want running", j.Status)
	}
}
