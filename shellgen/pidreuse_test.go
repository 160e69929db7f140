package shellgen_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/pidreuse"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// childOf returns the pid of a live child of ppid whose command line
// holds each of words (as whole arguments), or 0.
func childOf(ppid int, words ...string) int {
	for _, pid := range childrenOf(ppid) {
		c, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		args := strings.Split(string(c), "\x00")
		ok := true
		for _, w := range words {
			ok = ok && slices.Contains(args, w)
		}
		if ok {
			return pid
		}
	}
	return 0
}

// reaped waits until pid is no process at all, not even a zombie: its
// parent has reaped it and the pid is free.
func reaped(t *testing.T, pid int, what string) {
	t.Helper()
	if !eventually(10*time.Second, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil
	}) {
		t.Fatalf("%s %d was not reaped", what, pid)
	}
}

// groupGone waits until no process, zombies included, is in process
// group pgid: until then the kernel hands out no pid equal to it.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	if !eventually(10*time.Second, func() bool {
		return len(procsWhere(func(f []string) bool { return len(f) > 2 && f[2] == strconv.Itoa(pgid) })) == 0
	}) {
		t.Fatalf("process group %d did not end", pgid)
	}
}

// launchJob launches a job of argv by the launch script under sh, set
// (unless nil) changing its launch, and returns its target, the job and
// its directory; the job's group is killed when the test ends.
func launchJob(t *testing.T, sh *shell, argv []string, set func(*shellgen.Launch)) (shellgen.Target, jobdir.Job, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	l := shellgen.Launch{Target: shellgen.Target{Root: root, Workspace: "w"},
		Meta: jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Argv: argv, Env: []string{}}}
	l.Meta.Command, _ = shellgen.QuoteArgv(argv)
	if set != nil {
		set(&l)
	}
	script, err := shellgen.LaunchScript(l)
	if err != nil {
		t.Fatal(err)
	}
	job := runOne(t, sh, t.TempDir(), nil, script)
	t.Cleanup(func() { syscall.Kill(-job.PID, syscall.SIGKILL) })
	return l.Target, job, filepath.Join(root, "w", job.ID)
}

// stranger gives a process the pid pid (pidreuse) and returns what ends
// it, for survives.
func stranger(t *testing.T, pid int) <-chan error {
	t.Helper()
	p := pidreuse.Start(t, pid)
	gone := make(chan error, 1)
	go func() { gone <- p.Wait() }()
	return gone
}

// survives fails the test when the process given a reused pid has ended.
func survives(t *testing.T, gone <-chan error, pid int, what string) {
	t.Helper()
	select {
	case err := <-gone:
		t.Fatalf("the process given %s's old pid %d was signalled: %v", what, pid, err)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestWrapperSparesAReusedTimerPID: a --timeout timer that ended before
// the command (killed: the OOM killer, an administrator) is reaped by the
// wrapper while it waits for the command, and its pid may be another
// process's by the job's end. The wrapper ended "the timer" there by its
// pid (and group) alone: a TERM to whoever had it. A process given the
// pid (ns_last_pid) outlives the job.
func TestWrapperSparesAReusedTimerPID(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			gate := filepath.Join(t.TempDir(), "go")
			_, job, dir := launchJob(t, &sh, []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", gate},
				func(l *shellgen.Launch) { l.Timeout, l.Grace = time.Hour, time.Second })
			var timer int
			if !eventually(10*time.Second, func() bool {
				timer = childOf(job.PID, "timer", strconv.Itoa(job.PID))
				return timer > 0
			}) {
				t.Fatal("no timer found")
			}
			// The timer leads a group of its own (setsid): end it all.
			syscall.Kill(-timer, syscall.SIGKILL)
			syscall.Kill(timer, syscall.SIGKILL)
			reaped(t, timer, "the timer")
			groupGone(t, timer)
			gone := stranger(t, timer)
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(waitExitCode(t, dir)); got != "0" {
				t.Errorf("exit_code %q, want 0", got)
			}
			survives(t, gone, timer, "the timer")
		})
	}
}

// TestTimerSparesAReusedPID: where there is no setsid, the --timeout
// timer does not lead a group of its own, and what wakes it at the
// timeout (a "sleep TIMEOUT && kill -s USR1 TIMER" in the background)
// outlives a timer that ended early (killed). At the timeout it sent USR1,
// which ends a process that does not catch it, to whoever had the timer's
// pid by then. The timer is started as the wrapper starts it without
// setsid, killed alone, and its pid given to another process while the
// sleep is held (stopped); that process outlives the sleep's end.
func TestTimerSparesAReusedPID(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			_, _, dir := launchJob(t, &sh, []string{"true"},
				func(l *shellgen.Launch) { l.Timeout, l.Grace = 3*time.Second, time.Second })
			// The job the timer watches: alive throughout.
			owner := exec.Command("sleep", "600")
			if err := owner.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
			// Without setsid the timer is in its wrapper's group, which
			// a holder leads here (a pid that is a group's id is not
			// handed out again). The holder reaps the timer and stays:
			// a group left without its leader, with a stopped member,
			// would be sent a HUP.
			args := append(sh.argv[1:], "-c", `"$@" & echo $!; wait $!; exec sleep 600`, "holder", sh.path(t))
			args = append(append(args, sh.argv[1:]...), filepath.Join(dir, "job.sh"), "timer", strconv.Itoa(owner.Process.Pid))
			holder := exec.Command(sh.path(t), args...)
			holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := holder.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			tp, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				t.Fatalf("the timer's pid: %q %v %v", line, err, perr)
			}
			// The waker: the timer's subshell, whose sleep is the
			// timeout's ("sleep 3"; the timer's own naps are "sleep 1"
			// children of the timer itself). It is held before it ends.
			var waker, nap int
			if !eventually(10*time.Second, func() bool {
				for _, c := range childrenOf(tp) {
					if n := childOf(c, "sleep", "3"); n > 0 {
						waker, nap = c, n
						return true
					}
				}
				return false
			}) {
				t.Fatal("no waker found")
			}
			if err := syscall.Kill(nap, syscall.SIGSTOP); err != nil {
				t.Fatalf("hold the waker's sleep: %v", err)
			}
			syscall.Kill(tp, syscall.SIGKILL)
			reaped(t, tp, "the timer")
			gone := stranger(t, tp)
			if err := syscall.Kill(nap, syscall.SIGCONT); err != nil {
				t.Fatalf("the waker's sleep is gone before its time: %v", err)
			}
			reaped(t, nap, "the waker's sleep")
			if !eventually(10*time.Second, func() bool {
				_, err := os.Stat(fmt.Sprintf("/proc/%d", waker))
				return err != nil
			}) {
				t.Fatal("the waker did not end")
			}
			survives(t, gone, tp, "the timer")
		})
	}
}

// TestSendSparesAReusedCopyPID: send copies its stdin into a job's FIFO
// with a cat in the background and looks between naps whether the copy
// is still there. Once the copy has ended, the shell reaps it during its
// nap, and the look after the nap took the pid's new owner, alive, for
// the copy (kill -0): send went on until the job ended, then TERMed it
// (or, with a time limit, stopped and killed it). The nap is held (its
// sleep stopped) while the copy ends, is reaped and a process is given
// its pid (ns_last_pid): send returns, and the process lives on.
func TestSendSparesAReusedCopyPID(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			gate := filepath.Join(t.TempDir(), "go")
			target, job, dir := launchJob(t, &sh, []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", gate},
				func(l *shellgen.Launch) { l.Meta.Stdin = true })

			script, err := shellgen.SendScript(target, shellgen.Send{Ref: job.ID})
			if err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			if _, err := in.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			// The copy reads the pipe (its stdin); the nap's sleep /dev/null.
			var copier, nap int
			if !eventually(10*time.Second, func() bool {
				copier, nap = 0, 0
				for _, pid := range childrenOf(cmd.Process.Pid) {
					switch l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid)); {
					case strings.HasPrefix(l, "pipe:"):
						copier = pid
					case l == "/dev/null":
						nap = pid
					}
				}
				return copier > 0 && nap > 0 && syscall.Kill(nap, syscall.SIGSTOP) == nil
			}) {
				t.Fatalf("send's copy and nap not found; stderr %q", stderr.Bytes())
			}
			in.Close()
			reaped(t, copier, "send's copy")
			gone := stranger(t, copier)
			syscall.Kill(nap, syscall.SIGCONT)
			// Before, send went on until the job ended, and then signalled.
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			waitExitCode(t, dir)
			select {
			case err := <-ended:
				if err != nil {
					t.Errorf("send: %v; stdout %q, stderr %q", err, out.Bytes(), stderr.Bytes())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("send did not return")
			}
			survives(t, gone, copier, "send's copy")
		})
	}
}

// childrenOf returns the live children of ppid.
func childrenOf(ppid int) []int {
	return procsWhere(func(f []string) bool { return len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(ppid) })
}

// procsWhere returns the pids of the processes whose stat fields (statOf)
// match.
func procsWhere(match func(f []string) bool) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && match(statOf(pid)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// statOf returns the fields of /proc/PID/stat after the command name:
// f[0] the state (R, S, Z...), f[1] the parent, f[2] the process group;
// nil when there is no such process.
func statOf(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}
