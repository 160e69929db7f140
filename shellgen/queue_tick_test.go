package shellgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// tickOf returns the pid of the live child of the wrapper wrapper whose
// stdout is the FIFO wake (the queue's tick), or 0.
func tickOf(wrapper int, wake string) int {
	for _, pid := range childrenOf(wrapper) {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", pid)); l == wake {
			return pid
		}
	}
	return 0
}

// procState returns the state of process pid (R, S, Z...), "" when there
// is no such process.
func procState(pid int) string {
	if f := statOf(pid); len(f) > 0 {
		return f[0]
	}
	return ""
}

// TestQueueTickSparesAReusedPID: a queued job's wrapper keeps a tick, a
// child that wakes it after 60 s to make up a wake lost to a SIGKILL,
// and starts a new one when the tick is gone. It took the tick to be
// there while kill -0 found its pid alive, and ended it, as the job left
// the queue, by its pid and group alone. A wrapper run by bash reaps an
// ended tick at once, and the pid may be another process's by the next
// look: it started no new tick (the next lost wake was never made up)
// and TERMed that process as the job got its turn. The tick is ended
// early here (it sleeps 60 s), a process is given its pid (ns_last_pid)
// and the wrapper is woken; each shell runs as /bin/sh, the wrapper's
// shell. Under dash and busybox sh the ended tick stays a zombie until
// the wrapper next waits for a child (the look after the wake does), so
// its pid cannot be given away while the wrapper sleeps: there the test
// checks only that a new tick is started.
func TestQueueTickSparesAReusedPID(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			target := shellgen.Target{Root: root, Workspace: "w"}
			gate := filepath.Join(t.TempDir(), "go")
			launch := func(m jobdir.Meta) (jobdir.Job, string) {
				m.Version, m.ID, m.Workspace, m.Env = jobdir.Version, jobdir.NewID(time.Now()), "w", []string{}
				m.Command, _ = shellgen.QuoteArgv(m.Argv)
				script, err := shellgen.LaunchScript(shellgen.Launch{Target: target, Meta: m})
				if err != nil {
					t.Fatal(err)
				}
				cmd := sh.asBinSh(t, "-c", script)
				cmd.Dir = t.TempDir()
				jobs := cmdJobs(t, cmd)
				if len(jobs) != 1 {
					t.Fatalf("script reported %d jobs, want 1", len(jobs))
				}
				t.Cleanup(func() { syscall.Kill(-jobs[0].PID, syscall.SIGKILL) })
				return jobs[0], filepath.Join(root, "w", m.ID)
			}
			first, _ := launch(jobdir.Meta{Argv: []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", gate}})
			job, dir := launch(jobdir.Meta{Argv: []string{"true"}, After: []string{first.ID}})
			wake := filepath.Join(dir, "wake")
			// The tick at work (its sleep started) and the wrapper asleep
			// on its FIFO: it has read the tick's start time.
			var tick int
			if !eventually(10*time.Second, func() bool {
				tick = tickOf(job.PID, wake)
				return tick > 0 && len(childrenOf(tick)) > 0 && procState(job.PID) == "S"
			}) {
				t.Fatal("the queued job's wrapper does not wait with a tick")
			}
			// The tick leads a group of its own (setsid): end it all, as
			// its sleep would have ended. A wake before it has ended (a
			// zombie) would find it alive.
			syscall.Kill(-tick, syscall.SIGKILL)
			syscall.Kill(tick, syscall.SIGKILL)
			if !eventually(10*time.Second, func() bool { s := procState(tick); return s == "" || s == "Z" }) {
				t.Fatalf("the tick %d did not end", tick)
			}
			var gone <-chan error
			if sh.name == "bash" { // the shell that reaps at once
				reaped(t, tick, "the tick")
				groupGone(t, tick)
				gone = stranger(t, tick)
			}
			// A wake: the wrapper looks again, and starts a new tick.
			f, err := os.OpenFile(wake, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteString("w\n")
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var next int
			if eventually(10*time.Second, func() bool {
				next = tickOf(job.PID, wake)
				return next > 0 && next != tick
			}) {
				t.Cleanup(func() { syscall.Kill(-next, syscall.SIGKILL) })
			} else {
				t.Errorf("the wrapper started no new tick once its tick %d had ended", tick)
			}
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(waitExitCode(t, dir)); got != "0" {
				t.Errorf("exit_code %q, want 0", got)
			}
			if gone != nil {
				survives(t, gone, tick, "the tick")
			}
		})
	}
}
