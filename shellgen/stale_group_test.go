package shellgen_test

import (
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

// TestStopSparesAGroupThatIsNoLongerTheJobs: a job ended long ago, its
// wrapper's pid given since to a process that made a process group of it
// and left a member there (a daemon's double fork: the session leader
// forks and exits). The job was recorded without leftovers, so its own
// group was found gone: stop --all (and stop, rm, prune, which always
// scan) must not take the stranger's group for the job's and kill it.
func TestStopSparesAGroupThatIsNoLongerTheJobs(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			// The stranger: a session leader that forks a member and exits.
			lead := exec.Command("sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!")
			lead.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := lead.Output()
			if err != nil {
				t.Fatal(err)
			}
			member, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) })
			gone := make(chan struct{})
			go func() {
				for {
					if f := statOf(member); len(f) == 0 || f[0] == "Z" {
						close(gone)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()

			root := filepath.Join(t.TempDir(), "root")
			g := lead.Process.Pid
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited,
				Meta: jobdir.Meta{PID: g, PGID: g, ProcStart: "1"}})
			dir := filepath.Join(root, "w", job.Meta.ID)
			if err := os.WriteFile(filepath.Join(dir, "leftovers"), []byte("0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := shellgen.Target{Root: root, Workspace: "w"}
			for _, s := range []shellgen.Stop{{All: true}, {Refs: []string{job.Meta.ID}}} {
				script, err := shellgen.StopScript(target, shellgen.Stop{Refs: s.Refs, All: s.All, Signal: "TERM", Grace: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				jobs := runScript(t, &sh, t.TempDir(), nil, script)
				for _, j := range jobs {
					if j.LiveProcesses != 0 {
						t.Errorf("stop %+v: the job counted %d live processes (the stranger's group)", s, j.LiveProcesses)
					}
				}
				select {
				case <-gone:
					t.Fatalf("stop %+v killed the member of a group that is no longer the job's", s)
				case <-time.After(300 * time.Millisecond):
				}
			}
		})
	}
}

// TestStopEndsAStoppedJob: a job whose whole group, wrapper included, was
// stopped (SIGSTOP, Ctrl-Z in its terminal) holds every signal but KILL
// until it runs again, and its stopped wrapper records nothing: stop
// waited, then left it running (and said it was stopped). A stop
// continues what it signals, and the job ends and is recorded, whatever
// the signal; so does a --timeout whose timer fires on a stopped job.
func TestStopEndsAStoppedJob(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			for _, tt := range []struct {
				name   string
				signal string
				grace  time.Duration
				set    func(*shellgen.Launch)
			}{
				{"TERM", "TERM", 5 * time.Second, nil},
				{"INT", "INT", 5 * time.Second, nil},
				{"KILL", "KILL", 5 * time.Second, nil},
				{"no grace", "TERM", 0, nil},
				{"timeout", "", 0, func(l *shellgen.Launch) { l.Timeout, l.Grace = 2*time.Second, 5*time.Second }},
			} {
				target, job, dir := launchJob(t, &sh, []string{"sleep", "300"}, tt.set)
				// The timer, once in a group of its own (a stop of the job's
				// group stops it too before that).
				if tt.signal == "" && !eventually(10*time.Second, func() bool {
					f := statOf(childOf(job.PID, "timer", strconv.Itoa(job.PID)))
					return len(f) > 2 && f[2] != strconv.Itoa(job.PID)
				}) {
					t.Fatalf("%s: the wrapper started no timer", tt.name)
				}
				if err := syscall.Kill(-job.PID, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				if !eventually(10*time.Second, func() bool { f := statOf(job.PID); return len(f) > 0 && f[0] == "T" }) {
					t.Fatalf("%s: the wrapper %d was not stopped", tt.name, job.PID)
				}
				if tt.signal != "" {
					script, err := shellgen.StopScript(target, shellgen.Stop{Refs: []string{job.ID}, Signal: tt.signal, Grace: tt.grace})
					if err != nil {
						t.Fatal(err)
					}
					runScript(t, &sh, t.TempDir(), nil, script)
				}
				if !eventually(20*time.Second, func() bool {
					b, err := os.ReadFile(filepath.Join(dir, "exit_code"))
					return err == nil && strings.HasSuffix(string(b), "\n")
				}) {
					t.Errorf("%s: the stopped job was not ended and recorded (wrapper %v)", tt.name, statOf(job.PID))
				}
			}
		})
	}
}

// TestStopSignalsOnce: a stop sends its signal once. Under busybox, whose
// kill takes "--" for a bad pid, fails and signals the rest anyway, the
// retry without "--" sent TERM twice, and a job's TERM trap ran twice.
func TestStopSignalsOnce(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			// wait returns at once on a signal, so the trap runs between two
			// TERMs sent one after the other.
			script := `trap 'echo got TERM' TERM; echo ready; sleep 300 & while :; do wait $!; done`
			target, job, dir := launchJob(t, &sh, []string{"sh", "-c", script}, nil)
			if !eventually(10*time.Second, func() bool { b, _ := os.ReadFile(filepath.Join(dir, "stdout.log")); return string(b) == "ready\n" }) {
				t.Fatal("the job did not start")
			}
			s, err := shellgen.StopScript(target, shellgen.Stop{Refs: []string{job.ID}, Signal: "TERM", Grace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, &sh, t.TempDir(), nil, s)
			if b, _ := os.ReadFile(filepath.Join(dir, "stdout.log")); string(b) != "ready\ngot TERM\n" {
				t.Errorf("the job's output after one stop: %q, want one TERM", b)
			}
		})
	}
}
