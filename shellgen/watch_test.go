package shellgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// syncBuffer is a bytes.Buffer a script writes to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWatchScriptReports: the watch of a follow of events reports W
// changed at once, then at each change of the workspace's jobs (a job
// made, a job's exit_code, a wrapper killed without a trace), and nothing
// while nothing changes; it naps on its trigger where tail is GNU's, also
// while no job runs, and a job's end wakes it there (tail -F on the
// exit_code of the jobs not ended). With
// refs it watches those jobs only. Once its stdin closes it ends, leaving
// no process behind.
func TestWatchScriptReports(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			jobdirtest.Make(t, root, "w", jobdirtest.Job{})
			target := shellgen.Target{Root: root, Workspace: "w"}
			script, err := shellgen.WatchScript(target, shellgen.Watch{})
			if err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out syncBuffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				stdin.Close()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Error("the watch went on after its stdin closed")
				}
			}()
			changes := func() int { return strings.Count(out.String(), "W\tchanged\n") }
			// settled waits until the count has stayed put for a while,
			// and returns it.
			settled := func(what string) int {
				t.Helper()
				n, since := changes(), time.Now()
				for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if m := changes(); m != n {
						n, since = m, time.Now()
					}
					if time.Since(since) > 1500*time.Millisecond {
						return n
					}
				}
				t.Fatalf("%s: the watch kept reporting: %q", what, out.String())
				return 0
			}
			if !eventually(10*time.Second, func() bool { return changes() >= 1 }) {
				t.Fatalf("no first report: %q", out.String())
			}
			n := settled("at the start")
			if n != 1 {
				t.Errorf("%d reports at the start of an idle workspace, want 1", n)
			}
			// Idle, it naps on its trigger too (its ticker), not a tenth
			// of a second at a time: tail needs a file, the root's mark.
			mark := filepath.Join(root, ".bgjob-root")
			if gnu := gnuTail(); !eventually(10*time.Second, func() bool { return (len(readers(mark)) > 0) == gnu }) {
				t.Errorf("trigger of an idle workspace seen: %v, want %v (GNU tail)", !gnu, gnu)
			}

			running := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			if !eventually(10*time.Second, func() bool { return changes() > n }) {
				t.Fatal("a job made was not reported")
			}
			n = settled("after a job was made")
			code := filepath.Join(running.Path, "exit_code")
			if gnu := gnuTail(); !eventually(10*time.Second, func() bool { return (len(readers(code)) > 0) == gnu }) {
				t.Errorf("trigger on %s seen: %v, want %v (GNU tail)", code, !gnu, gnu)
			}
			running.End(t, 3)
			if !eventually(10*time.Second, func() bool { return changes() > n }) {
				t.Fatal("a job's end was not reported")
			}
			n = settled("after a job ended")

			lost := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			if !eventually(10*time.Second, func() bool { return changes() > n }) {
				t.Fatal("a second job made was not reported")
			}
			n = settled("after a second job was made")
			if err := lost.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if !eventually(15*time.Second, func() bool { return changes() > n }) {
				t.Fatal("a wrapper killed without a trace was not reported")
			}
			settled("after a wrapper was killed")
		})
	}
}

// TestWatchScriptRefs: with refs the watch reports the changes of those
// jobs, not of others made beside them.
func TestWatchScriptRefs(t *testing.T) {
	sh := allShells[1]
	sh.path(t)
	t.Parallel()
	root := filepath.Join(t.TempDir(), "root")
	job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
	script, err := shellgen.WatchScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Watch{Refs: []string{job.Meta.ID}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := sh.command(t, "-c", script)
	present(t, cmd)
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	changes := func() int { return strings.Count(out.String(), "W\tchanged\n") }
	if !eventually(10*time.Second, func() bool { return changes() == 1 }) {
		t.Fatalf("no first report: %q", out.String())
	}
	jobdirtest.Make(t, root, "w", jobdirtest.Job{})
	time.Sleep(2 * time.Second) // two ticks: the other job is passed over
	if n := changes(); n != 1 {
		t.Fatalf("%d reports after another job was made, want 1", n)
	}
	job.End(t, 0)
	if !eventually(10*time.Second, func() bool { return changes() == 2 }) {
		t.Fatalf("the job's end was not reported: %q", out.String())
	}
}
