package shellgen_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// TestSendEOFWaitsForTheKeeper: send --eof ends the keeper that holds a
// job's stdin FIFO open with a KILL, which takes effect when the keeper
// next runs: on a busy host that came after send had returned, and a send
// to a PTY job right after was taken, not refused (pty.txtar, under two
// busy loops). A keeper held in a frozen cgroup (the v1 freezer: a KILL
// waits for the thaw) stands for that host: send --eof returns only once
// the keeper is gone.
func TestSendEOFWaitsForTheKeeper(t *testing.T) {
	const freezer = "/sys/fs/cgroup/freezer"
	if os.Geteuid() != 0 {
		testneed.Missing(t, "root, to freeze a process (cgroup v1 freezer)")
	}
	if _, err := os.Stat(filepath.Join(freezer, "tasks")); err != nil {
		testneed.Missing(t, "the cgroup v1 freezer at %s", freezer)
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			target, job, _, keeper := stdinJob(t, &sh, []string{"cat"})

			cg := filepath.Join(freezer, fmt.Sprintf("bgjob-test-%d-%s", os.Getpid(), sh.name))
			if err := os.Mkdir(cg, 0o755); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(cg, "freezer.state")
			t.Cleanup(func() {
				os.WriteFile(state, []byte("THAWED"), 0)
				os.WriteFile(filepath.Join(freezer, "tasks"), []byte(strconv.Itoa(keeper)), 0)
				eventually(5*time.Second, func() bool { return os.Remove(cg) == nil })
			})
			if err := os.WriteFile(filepath.Join(cg, "tasks"), []byte(strconv.Itoa(keeper)), 0); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(state, []byte("FROZEN"), 0); err != nil {
				t.Fatal(err)
			}
			if !eventually(10*time.Second, func() bool {
				b, _ := os.ReadFile(state)
				return strings.TrimSpace(string(b)) == "FROZEN"
			}) {
				t.Fatal("the keeper's cgroup did not freeze")
			}

			script, err := shellgen.SendScript(target, shellgen.Send{Ref: job.ID, EOF: true})
			if err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			select {
			case err := <-ended:
				t.Fatalf("send --eof returned (%v) while the keeper, frozen, was still alive; stdout %q, stderr %q", err, out.Bytes(), stderr.Bytes())
			case <-time.After(time.Second):
			}
			if err := os.WriteFile(state, []byte("THAWED"), 0); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ended:
				if err != nil {
					t.Fatalf("send --eof: %v; stderr %q", err, stderr.Bytes())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("send --eof did not return once the keeper could die")
			}
			if f := statOf(keeper); len(f) > 0 && f[0] != "Z" {
				t.Errorf("send --eof returned with the keeper alive: %v", f)
			}
		})
	}
}

// TestWrapperSparesAReusedKeeperPID: after send --eof has ended a job's
// stdin keeper, the wrapper reaps it while its command runs on, and the
// keeper's pid may be handed to another process before the command ends.
// The wrapper ended "the keeper" at the job's end by that pid alone: a
// KILL to whoever had it. A process given the pid (ns_last_pid) outlives
// the job.
func TestWrapperSparesAReusedKeeperPID(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			gate := filepath.Join(t.TempDir(), "go")
			target, job, dir, keeper := stdinJob(t, &sh, []string{"sh", "-c", `cat >/dev/null; while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", gate})
			script, err := shellgen.SendScript(target, shellgen.Send{Ref: job.ID, EOF: true})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := sh.command(t, "-c", script).CombinedOutput(); err != nil {
				t.Fatalf("send --eof: %v\n%s", err, out)
			}
			// Reaped by the wrapper as it waits for the command.
			reaped(t, keeper, "the keeper")
			gone := stranger(t, keeper)
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(waitExitCode(t, dir)); got != "0" {
				t.Errorf("exit_code %q, want 0", got)
			}
			survives(t, gone, keeper, "the keeper")
		})
	}
}

// stdinJob launches argv as a job started with --stdin under sh and
// returns its target, the job, its directory and its stdin keeper's pid.
func stdinJob(t *testing.T, sh *shell, argv []string) (shellgen.Target, jobdir.Job, string, int) {
	t.Helper()
	target, job, dir := launchJob(t, sh, argv, func(l *shellgen.Launch) { l.Meta.Stdin = true })
	var keeper int
	if !eventually(10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "stdin.keeper"))
		keeper, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return keeper > 0
	}) {
		t.Fatal("the wrapper recorded no keeper")
	}
	return target, job, dir, keeper
}
