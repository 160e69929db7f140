package shellgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestWaitsKeepTheClock runs wait, wait --for and send with a timeout of
// a second on a job that never gives them what they wait for, where each
// nap of a tenth takes a whole second (as a look does on a loaded host):
// each gives up after about a second, by the clock, not after ten naps,
// and leaves no process behind (its clock included).
func TestWaitsKeepTheClock(t *testing.T) {
	const timeout = time.Second
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			target := shellgen.Target{Root: root, Workspace: "w"}
			idle := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running}).Meta

			// A job whose stdin FIFO nobody reads: the copy fills the pipe
			// and blocks.
			m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Argv: []string{"sleep", "600"}, Env: []string{}, Stdin: true}
			m.Command, _ = shellgen.QuoteArgv(m.Argv)
			launch, err := shellgen.LaunchScript(shellgen.Launch{Target: target, Meta: m})
			if err != nil {
				t.Fatal(err)
			}
			deaf := runOne(t, &sh, t.TempDir(), nil, launch)
			t.Cleanup(func() { syscall.Kill(-deaf.PID, syscall.SIGKILL) })

			waitScript, err := shellgen.WaitScript(target, shellgen.Wait{Refs: []string{idle.ID}, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			forScript, err := shellgen.WaitForScript(target, shellgen.WaitFor{Ref: idle.ID, Pattern: "never", Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			sendScript, err := shellgen.SendScript(target, shellgen.Send{Ref: deaf.ID, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			path := slowNaps(t) + string(os.PathListSeparator) + sh.asSh(t) + string(os.PathListSeparator) + os.Getenv("PATH")
			for _, tt := range []struct {
				name, script string
				input        []byte
				want         string // the record that says it gave up
			}{
				{"wait", waitScript, nil, "W\ttimeout\n"},
				{"wait for", forScript, nil, "W\ttimeout\n"},
				{"send", sendScript, bytes.Repeat([]byte("x"), 1<<20), "E\ttimeout\t"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					cmd := sh.command(t, "-c", tt.script)
					cmd.Env = append(os.Environ(), "PATH="+path)
					cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
					// Its stdin stays open until it ends: a closed stdin
					// means the caller went away.
					in, err := cmd.StdinPipe()
					if err != nil {
						t.Fatal(err)
					}
					var out, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &stderr
					start := time.Now()
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
					go func() {
						in.Write(tt.input)
					}()
					err = cmd.Wait()
					took := time.Since(start)
					in.Close()
					if tt.name != "send" && err != nil {
						t.Fatalf("%v\n%s", err, stderr.Bytes())
					}
					if !strings.Contains(out.String(), tt.want) {
						t.Errorf("output %q lacks %q; stderr:\n%s", out.Bytes(), tt.want, stderr.Bytes())
					}
					// Ten naps would take ten seconds; the margin is for load.
					if took > timeout+4*time.Second {
						t.Errorf("gave up after %s; the timeout is %s", took, timeout)
					}
					if !eventually(10*time.Second, func() bool { return len(groupLive(cmd.Process.Pid)) == 0 }) {
						t.Errorf("processes of the script outlived it: %v", groupLive(cmd.Process.Pid))
					}
				})
			}
		})
	}
}

// slowNaps returns a directory holding a sleep for which a nap of a tenth
// of a second (bg_nap) takes a whole second; other sleeps are as asked.
func slowNaps(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" != 0.1 ] || set -- 1\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sleep"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eventually reports whether ok holds within d, asking every 20 ms.
func eventually(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// groupLive returns the pids of the live (not zombie) processes of the
// process group pgid.
func groupLive(pgid int) []int {
	return procsWhere(func(f []string) bool { return len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) })
}
