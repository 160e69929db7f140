package shellgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// sleeps puts first on PATH a sleep that appends "PPID ARGS" to a file
// before it sleeps, and returns a func that reads those lines.
func sleeps(t *testing.T) func() []string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "sleeps")
	shadow(t, "sleep", func(real string) string {
		return "printf '%s %s\\n' \"$PPID\" \"$*\" >>" + log + "\nexec " + real + " \"$@\"\n"
	})
	return func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
	}
}

// tickEverySecond returns script with its ticker ticking every second
// (bg_ftick=1), for the tests that count looks by the tick.
func tickEverySecond(t *testing.T, script string) string {
	t.Helper()
	if !strings.Contains(script, "\nbg_ftick=3\n") {
		t.Fatal("the script sets no bg_ftick=3")
	}
	return strings.Replace(script, "\nbg_ftick=3\n", "\nbg_ftick=1\n", 1)
}

// followQuiet follows job, running and writing nothing, under sh, its
// script's pid written first to a file, until look says enough, then ends
// the job; it returns the script's pid.
func followQuiet(t *testing.T, sh shell, root string, job *jobdirtest.Dir, look func() bool) string {
	t.Helper()
	script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	pidf := filepath.Join(t.TempDir(), "pid")
	_, ended := waiting(t, sh, "echo $$ >"+pidf+"\n"+tickEverySecond(t, script))
	if !eventually(20*time.Second, look) {
		t.Error("the follow did not look as often as expected")
	}
	job.End(t, 0)
	ended("the job ended")
	pid, err := os.ReadFile(pidf)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(pid))
}

// TestNapIsOneProcess: where there is no trigger (a tail that is not
// GNU's), a follow naps a tenth of a second at a time with a sleep the
// script starts itself, one process a nap: the nap was a subshell that
// started the sleep, two.
func TestNapIsOneProcess(t *testing.T) {
	shadow(t, "tail", func(real string) string {
		return "[ \"$1\" != --version ] || { echo 'tail (BusyBox)'; exit 0; }\nexec " + real + " \"$@\"\n"
	})
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			naps := sleeps(t)
			pid := followQuiet(t, sh, root, job, func() bool { return len(naps()) >= 5 })
			for _, n := range naps() {
				if !strings.HasPrefix(n, pid+"_") {
					t.Errorf("a sleep %q (parent_args) not started by the script, pid %s", n, pid)
				}
			}
		})
	}
}

// TestQuietLookNapsOnce: with the trigger (GNU tail), a follow of a job
// that writes nothing, woken by the ticker once a second, naps on the
// trigger alone, with no sleep for the floor between looks (bg_ffloor):
// that sleep comes only after a read of the trigger that took less than
// the floor. It came first, one process more each look.
func TestQuietLookNapsOnce(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			naps := sleeps(t)
			ticks := func() (n int) {
				for _, s := range naps() {
					if strings.HasSuffix(s, "_1") {
						n++
					}
				}
				return n
			}
			followQuiet(t, sh, root, job, func() bool { return ticks() >= 3 })
			for _, s := range naps() {
				if !strings.HasSuffix(s, "_1") {
					t.Errorf("a sleep %q (parent_args) besides the ticker's", s)
				}
			}
		})
	}
}

// TestWaitForLookProcesses: a look of wait --for at new whole lines that
// do not match starts od (-j: it reads the last byte itself), dd and
// grep -q, no head -n or cut: those ask where a match is, after grep -q said
// there is one. The look piped the last byte from dd into od, and grep's
// line numbers through head and cut, every time.
func TestWaitForLookProcesses(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
			log := filepath.Join(t.TempDir(), "started")
			for _, tool := range []string{"od", "head", "cut", "grep"} {
				shadow(t, tool, func(real string) string {
					return "printf '%s\\n' \"" + tool + " $*\" >>" + log + "\nexec " + real + " \"$@\"\n"
				})
			}
			started := func() string { b, _ := os.ReadFile(log); return string(b) }
			script, err := shellgen.WaitForScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.WaitFor{Ref: job.Meta.ID, Pattern: "^READY", Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, script)
			if !eventually(10*time.Second, func() bool { return strings.Contains(started(), "grep -q") }) {
				t.Errorf("no look asked grep -q; started:\n%s", started())
			}
			for _, l := range strings.Split(strings.TrimSpace(started()), "\n") {
				if strings.HasPrefix(l, "head -n") || strings.HasPrefix(l, "cut") || strings.HasPrefix(l, "od") && !strings.Contains(l, " -j ") {
					t.Errorf("a look started %q", l)
				}
			}
			job.End(t, 0)
			ended("the job ended")
		})
	}
}

// TestChattyLookNapsOnce: with the trigger (GNU tail), a follow of a job
// that writes more often than the floor allows looks (bg_ffloor), whose
// every look finds new bytes, naps with the floor's sleep alone: the read
// of the trigger would end at once. It read the trigger every look, one
// process more.
func TestChattyLookNapsOnce(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			log := filepath.Join(t.TempDir(), "started")
			shadow(t, "stat", func(real string) string { return "echo look >>" + log + "\nexec " + real + " \"$@\"\n" })
			shadow(t, "dd", func(real string) string {
				return "case \"$*\" in *if=*) ;; *) echo read >>" + log + " ;; esac\nexec " + real + " \"$@\"\n"
			})
			count := func(what string) int { b, _ := os.ReadFile(log); return strings.Count(string(b), what+"\n") }
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, script)
			f, err := os.OpenFile(filepath.Join(job.Path, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 1000 && count("look") < 12; i++ {
				fmt.Fprintf(f, "line %d\n", i)
				time.Sleep(20 * time.Millisecond)
			}
			f.Close()
			job.End(t, 0)
			ended("the job ended")
			if looks, reads := count("look"), count("read"); looks < 12 || reads > looks/2 {
				t.Errorf("%d looks, %d reads of the trigger: want at least 12 looks, at most half as many reads", looks, reads)
			}
		})
	}
}

// needTimedTrigger ends t where a follow's nap has no trigger (no GNU
// tail) or cannot time the trigger's read (no /proc/uptime).
func needTimedTrigger(t *testing.T) {
	t.Helper()
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: no trigger here (.ci/run's Debian has coreutils)")
	}
	if _, err := os.Stat("/proc/uptime"); err != nil {
		testneed.Missing(t, "no /proc/uptime: the floor's sleep comes first")
	}
}

// TestBurstSettles: with the trigger (GNU tail), a follow of a job that
// wrote a burst far larger than the trigger's FIFO (64 KiB), then nothing,
// looks once a second again (the ticker's) as soon as it has read the
// burst: the trigger's tail had copied the whole burst into the FIFO, 64
// KiB a read, so the follow went on looking at the floor's pace until the
// FIFO had carried all of it (4 MiB: about 64 looks, some 13 s).
func TestBurstSettles(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			log := filepath.Join(t.TempDir(), "started")
			const burst = 4 << 20
			// A look prints "look SIZE" (stat's first line), a tick of the
			// ticker "tick".
			shadow(t, "stat", func(real string) string {
				return "bg_o=$(" + real + " \"$@\") || exit\nprintf 'look %s\\n' \"${bg_o%%[!0-9]*}\" >>" + log + "\nprintf '%s\\n' \"$bg_o\"\n"
			})
			shadow(t, "sleep", func(real string) string {
				return "[ \"$*\" != 1 ] || echo tick >>" + log + "\nexec " + real + " \"$@\"\n"
			})
			lines := func() []string { b, _ := os.ReadFile(log); return strings.Split(strings.TrimSpace(string(b)), "\n") }
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, tickEverySecond(t, script))
			if !eventually(10*time.Second, func() bool { return strings.Contains(strings.Join(lines(), " "), "tick") }) {
				t.Fatal("the follow's trigger did not start")
			}
			f, err := os.OpenFile(filepath.Join(job.Path, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Repeat("x", 99) + "\n"
			if _, err := f.WriteString(strings.Repeat(line, burst/len(line))); err != nil {
				t.Fatal(err)
			}
			f.Close()
			// From the look that read the burst's end, four ticks.
			after := func() []string {
				ls := lines()
				for i, l := range ls {
					if l == fmt.Sprintf("look %d", burst/len(line)*len(line)) {
						return ls[i+1:]
					}
				}
				return nil
			}
			count := func(what string) (n int) {
				for _, l := range after() {
					if strings.HasPrefix(l, what) {
						n++
					}
				}
				return n
			}
			if !eventually(30*time.Second, func() bool { return count("tick") >= 4 }) {
				t.Fatalf("no four ticks after the burst was read:\n%s", strings.Join(lines(), "\n"))
			}
			job.End(t, 0)
			ended("the job ended")
			// Four ticks, the looks they woke, and the few that settle the
			// trigger after the burst.
			if n := count("look"); n > 8 {
				t.Errorf("%d looks over the four seconds after the burst was read, want at most 8:\n%s", n, strings.Join(after(), "\n"))
			}
		})
	}
}

// TestChattyLooksSlowDown: with the trigger (GNU tail), a follow of a job
// that writes all the time (a line every 20 ms) looks about once a second
// once it has found new bytes at a few looks in a row: the least time
// between looks doubles from the floor (200 ms) at each up to a second
// (bg_fceil). It looked five times a second for as long as the job wrote,
// each look some three processes on the host.
func TestChattyLooksSlowDown(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			log := filepath.Join(t.TempDir(), "started")
			shadow(t, "stat", func(real string) string { return "echo look >>" + log + "\nexec " + real + " \"$@\"\n" })
			shadow(t, "sleep", func(real string) string {
				return "[ \"$*\" != 1 ] || echo tick >>" + log + "\nexec " + real + " \"$@\"\n"
			})
			lines := func() []string { b, _ := os.ReadFile(log); return strings.Fields(string(b)) }
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, tickEverySecond(t, script))
			f, err := os.OpenFile(filepath.Join(job.Path, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Written until six ticks have come; counted over the last four.
			count := func(what string) (ticks, n int) {
				for _, l := range lines() {
					if l == "tick" {
						ticks++
					} else if ticks >= 2 && l == what {
						n++
					}
				}
				return ticks, n
			}
			for i := 0; i < 2000; i++ {
				if ticks, _ := count("look"); ticks >= 6 {
					break
				}
				fmt.Fprintf(f, "line %d\n", i)
				time.Sleep(20 * time.Millisecond)
			}
			f.Close()
			job.End(t, 0)
			ended("the job ended")
			if ticks, looks := count("look"); ticks < 6 || looks > 7 {
				t.Errorf("%d looks from the second tick on (%d ticks), want at most 7:\n%s", looks, ticks, strings.Join(lines(), " "))
			}
		})
	}
}

// TestFollowWakesAtTheEnd: with the trigger (GNU tail), a follow of a quiet
// job ends when the job's exit_code appears, woken by the trigger, with
// no tick of the ticker since: it watches exit_code too (tail -F). It
// woke on the logs only, and saw a job's end at the next tick, which is
// why it ticked every second.
func TestFollowWakesAtTheEnd(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			log := filepath.Join(t.TempDir(), "started")
			shadow(t, "sleep", func(real string) string {
				return "case $* in *.*) ;; *) echo tick >>" + log + " ;; esac\nexec " + real + " \"$@\"\n"
			})
			ticks := func() int { b, _ := os.ReadFile(log); return strings.Count(string(b), "tick\n") }
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, script)
			if !eventually(10*time.Second, func() bool { return ticks() >= 1 }) {
				t.Fatal("the follow's ticker did not start")
			}
			job.End(t, 0)
			n := ticks()
			ended("the job ended")
			if ticks() > n {
				t.Errorf("the follow saw the job's end at a tick of the ticker (%d ticks before the end, %d after)", n, ticks())
			}
		})
	}
}

// TestTriggerFIFOGoneFirst: where the trigger's FIFO goes between its
// mkfifo and its opening (another script's sweep, a cleaner of the
// temporary directory), the follow makes no regular file of its name,
// leaves nothing there, and still sees the job's lines and its end:
// opening the name read-write created a regular file, which the trigger
// then read and wrote.
func TestTriggerFIFOGoneFirst(t *testing.T) {
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: no trigger here (.ci/run's Debian has coreutils)")
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			log := filepath.Join(t.TempDir(), "made")
			shadow(t, "mkfifo", func(real string) string {
				return real + " \"$@\" || exit\nfor a; do :; done\ncase $a in */bgjob-wake.*) echo mkfifo >>" + log + "; rm -f \"$a\" ;; esac\n"
			})
			shadow(t, "rm", func(real string) string {
				return "for a; do case $a in */bgjob-wake.*) [ ! -f \"$a\" ] || echo \"regular file $a\" >>" + log + " ;; esac; done\nexec " + real + " \"$@\"\n"
			})
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			out, ended := waiting(t, sh, script)
			made := func() string { b, _ := os.ReadFile(log); return string(b) }
			if !eventually(10*time.Second, func() bool { return strings.Contains(made(), "mkfifo") }) {
				t.Fatal("the follow made no FIFO")
			}
			f, err := os.OpenFile(filepath.Join(job.Path, "stdout.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("after\n")
			f.Close()
			job.End(t, 0)
			ended("the job ended")
			if strings.Contains(made(), "regular file") {
				t.Errorf("the follow made a regular file of its trigger's name: %s", made())
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if !strings.Contains(out.String(), "before\n") || !strings.Contains(out.String(), "after\n") {
				t.Errorf("output %q: want both lines", out.String())
			}
		})
	}
}

// TestTriggerSweepsRegularFile: the sweep of the trigger's leftovers
// removes a regular file of its name, of a script whose pid is gone (one
// killed between opening its FIFO's name and removing it), as it removes
// a FIFO: it removed FIFOs only.
func TestTriggerSweepsRegularFile(t *testing.T) {
	if !gnuTail() {
		testneed.Missing(t, "no GNU tail: no trigger here (.ci/run's Debian has coreutils)")
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		testneed.Missing(t, "no /proc: the sweep needs it")
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			// No process has a pid this large (pid_max is at most 2^22).
			stale := []string{filepath.Join(tmp, "bgjob-wake.99999991"), filepath.Join(tmp, "bgjob-wake.99999992")}
			if err := os.WriteFile(stale[0], nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(stale[1], 0o600); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running, Stdout: "before\n"})
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			_, ended := waiting(t, sh, script)
			log := filepath.Join(job.Path, "stdout.log")
			if !eventually(10*time.Second, func() bool { return len(readers(log)) > 0 }) {
				t.Error("the follow never started its trigger (tail -f)")
			}
			job.End(t, 0)
			ended("the job ended")
			for _, p := range stale {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("the sweep left %s", p)
				}
			}
		})
	}
}

// TestTriggerLeftNothingOpen: a follow killed in its nap (here not the
// leader of its process group, so its watcher kills it alone) leaves no
// process with its trigger's FIFO open for long: the nap's dd held the
// FIFO's writing end the script keeps, so it never saw the end of the
// FIFO and waited for ever, one process left on the host per follow cut.
func TestTriggerLeftNothingOpen(t *testing.T) {
	needTimedTrigger(t)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			root := filepath.Join(t.TempDir(), "root")
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Logs{Ref: job.Meta.ID, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
			// The caller stays (stdin open) until the script is killed.
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// holders lists the processes with a file of tmp open: the
			// trigger's FIFO, removed once opened.
			holders := func() (found []string) {
				ents, _ := os.ReadDir("/proc")
				for _, e := range ents {
					fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
					for _, fd := range fds {
						if l, _ := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name())); strings.HasPrefix(l, tmp+"/") {
							b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
							found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
							break
						}
					}
				}
				return found
			}
			if !eventually(10*time.Second, func() bool { return len(readers(filepath.Join(job.Path, "stdout.log"))) > 0 }) {
				t.Fatal("the follow never started its trigger (tail -f)")
			}
			// In its nap: the dd that reads the FIFO is there.
			if !eventually(10*time.Second, func() bool {
				return slices.ContainsFunc(holders(), func(s string) bool { return strings.Contains(s, " dd ") || strings.Contains(s, ": dd ") })
			}) {
				t.Fatalf("no dd napping on the trigger: %v", holders())
			}
			cmd.Process.Kill()
			cmd.Wait()
			// tail ends within its tenth of a second (--pid), the ticker at
			// its next tick (3 s), the dd once no writer is left.
			if !eventually(15*time.Second, func() bool { return len(holders()) == 0 }) {
				left := holders()
				for _, h := range left {
					if pid, _, ok := strings.Cut(h, ":"); ok {
						if p, err := strconv.Atoi(pid); err == nil {
							syscall.Kill(p, syscall.SIGKILL)
						}
					}
				}
				t.Errorf("left with the trigger's FIFO open, 15 s after the follow was killed: %v", left)
			}
		})
	}
}
