package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestInterruptedRunLosesNoJob: a run interrupted (Ctrl-C) at any moment
// leaves a job that runs its command or a directory without meta.json,
// never a lost job, locally and over SSH. The interrupts fall at random
// within the time a run takes here, so that some land after the wrapper
// wrote meta.json and before the launcher read its report: a wrapper that
// died writing that report to the launcher killed under it left a job
// lost (vanished) whose command never ran.
func TestInterruptedRunLosesNoJob(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			run := func(ctx context.Context) int {
				var out, errb bytes.Buffer
				return cli.Run(ctx, append(slices.Clone(tc.flags), "run", "-q", "--", "true"), strings.NewReader(""), &out, &errb)
			}
			var took []time.Duration
			for range 5 {
				start := time.Now()
				if code := run(context.Background()); code != 0 {
					t.Fatalf("run: exit %d", code)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			d := took[len(took)/2]
			n := 150
			if tc.name == "ssh" {
				n = 40
			}
			r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
			interrupted := 0
			for range n {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.Int64N(int64(d)+1)))
				if run(ctx) != 0 {
					interrupted++
				}
				cancel()
			}
			if interrupted == 0 {
				t.Fatalf("none of %d runs was interrupted: the test proves nothing", n)
			}
			var jobs []jobdir.Job
			if !eventually(60*time.Second, func() bool {
				code, out, _ := bgjob(context.Background(), append(slices.Clone(tc.flags), "ls", "--json")...)
				var page struct{ Jobs []jobdir.Job }
				if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
					return false
				}
				jobs = page.Jobs
				return !slices.ContainsFunc(jobs, func(j jobdir.Job) bool { return j.Status == jobdir.StatusRunning })
			}) {
				t.Fatal("jobs of true still run after a minute")
			}
			counts := map[jobdir.Status]int{}
			for _, j := range jobs {
				counts[j.Status]++
				if j.Status == jobdir.StatusLost {
					t.Errorf("job %s is lost (%s): its command never ran", j.ID, j.Reason)
				}
			}
			t.Logf("%d of %d runs interrupted (a run takes about %s); jobs: %v", interrupted, n, d, counts)
		})
	}
}

// TestInterruptedBigRunLeavesNoFile: a run whose launch script is too long
// for one argument (a 120 KB --env value: the script reaches the host on
// stdin) leaves nothing outside the job directory, however it is cut
// short: Ctrl-C (the runtime then kills the launcher), TERM, or a SIGKILL
// of the CLI; locally and over SSH. The bootstrap used to store the
// script, the value included, in a mktemp file that the kill left behind.
func TestInterruptedBigRunLeavesNoFile(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			marker := fmt.Sprintf("bgjob-secret-%x", rand.Uint64())
			value := strings.Repeat(marker, 120_000/len(marker))
			tmp := t.TempDir()
			run := func(sig syscall.Signal, after time.Duration) {
				cmd := exec.Command(bin, append(slices.Clone(tc.flags), "run", "-q", "-e", "SECRET="+value, "--", "true")...)
				cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GORACE=atexit_sleep_ms=0")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if sig != 0 {
					time.AfterFunc(after, func() { cmd.Process.Signal(sig) })
				}
				cmd.Wait()
			}
			var took []time.Duration
			for range 3 {
				start := time.Now()
				run(0, 0)
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			d := took[1]
			n := 30
			if tc.name == "ssh" {
				n = 12
			}
			sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
			for i := range n {
				run(sigs[i%len(sigs)], time.Duration(rand.Int64N(int64(d)+1)))
			}
			// What a killed CLI left running ends on its own.
			var left []string
			if !eventually(20*time.Second, func() bool {
				left = holding(t, marker, tmp, os.TempDir(), "/tmp")
				return len(left) == 0
			}) {
				t.Errorf("interrupted runs left files holding the --env value outside the job directory: %q", left)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				t.Errorf("interrupted runs left %d entries in TMPDIR", len(entries))
			}
		})
	}
}

// holding returns the regular files directly in dirs (up to 4 MB) whose
// content holds s.
func holding(t *testing.T, s string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if fi, err := e.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 4<<20 || slices.Contains(found, p) {
				continue
			}
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
				found = append(found, p)
			}
		}
	}
	return found
}

// TestRunSweepsCutShortLaunch: what a launch cut short can leave (a SIGKILL
// that no one can clean up after at once) is a job directory without
// meta.json, whose job.sh holds the --env values; run's pruning pass
// removes it once it has not changed for a minute, whatever it keeps of
// the jobs, and leaves a younger one (a launch that may be under way).
func TestRunSweepsCutShortLaunch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ws := filepath.Join(root, "default")
	old := filepath.Join(ws, jobdir.NewID(time.Now().Add(-2*time.Minute)))
	young := filepath.Join(ws, jobdir.NewID(time.Now()))
	for _, d := range []string{old, young} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, "job.sh"), "bg_env1='SECRET=x'\n")
	}
	then := time.Now().Add(-3 * time.Minute)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	c, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(bg.DefaultKeep, bg.DefaultMaxAge), bg.WithAutoPruneEvery(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), bg.Spec{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { _, err := os.Stat(old); return os.IsNotExist(err) }) {
		t.Error("run's pruning pass left the three-minute-old directory without meta.json")
	}
	if !eventually(10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(ws, ".prune.lock"))
		return os.IsNotExist(err)
	}) {
		t.Fatal("the pruning pass did not end")
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("run's pruning pass removed a directory a launch may still be filling: %v", err)
	}
}
