package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// target is where a test runs jobs: the flags that reach it.
type target struct {
	name  string
	flags []string
}

// localAndSSH returns a fresh root on this machine and one behind the
// test sshd, for tests that must hold for both runtimes.
func localAndSSH(t *testing.T) []target {
	t.Helper()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	_, _, sshFlags := sshJobs(t)
	return []target{{"local", []string{"--root", root}}, {"ssh", sshFlags}}
}

// slowWriter is a reader that falls behind: it takes nothing for its
// first delay, then counts what it is given.
type slowWriter struct {
	start time.Time
	delay time.Duration
	n     int64
	nul   int64
	other int64
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if d := w.delay - time.Since(w.start); d > 0 {
		time.Sleep(d)
	}
	w.n += int64(len(p))
	for _, c := range p {
		switch c {
		case 0:
			w.nul++
		case 'x':
		default:
			w.other++
		}
	}
	return len(p), nil
}

// TestFollowCappedFloodSlowReader: following a job whose log cap drops
// bytes while a slow reader lags behind prints only bytes of the log,
// never the zeros of the holes the cap punched, locally and over SSH.
func TestFollowCappedFloodSlowReader(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			flood := `for i in $(seq 90); do head -c 100000 /dev/zero | tr "\0" x; sleep 0.03; done`
			if code, _, errs := bgjob(ctx, append(tc.flags, "run", "-q", "-n", "flood", "--max-log-size", "64K", "--", flood)...); code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			w := &slowWriter{start: time.Now(), delay: 3 * time.Second}
			var errb bytes.Buffer
			code := cli.Run(ctx, append(tc.flags, "logs", "--follow", "flood"), strings.NewReader(""), w, &errb)
			if code != 0 {
				t.Fatalf("logs --follow: exit %d: %s", code, errb.String())
			}
			code, out, errs := bgjob(ctx, append(tc.flags, "status", "--json", "flood")...)
			var jobs []jobdir.Job
			if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
				t.Fatalf("status: exit %d: %s %s", code, out, errs)
			}
			j := jobs[0]
			if j.Status != jobdir.StatusExited || j.StdoutDropped == 0 {
				t.Fatalf("the flood is %s with %d bytes dropped: the cap did not drop anything, so the test proves nothing", j.Status, j.StdoutDropped)
			}
			if w.nul != 0 || w.other != 0 {
				t.Errorf("follow printed %d NUL bytes and %d other bytes among %d; want only x", w.nul, w.other, w.n)
			}
			// Every byte still in the log was printed; a byte dropped before
			// the reader got to it was not.
			if w.n < 9_000_000-j.StdoutDropped || w.n > 9_000_000 {
				t.Errorf("follow printed %d bytes; the flood wrote 9000000, of which %d are still in the log", w.n, 9_000_000-j.StdoutDropped)
			}
		})
	}
}

// TestAutoPruneKeepsRecentlyEnded: run's pruning pass ages a job by when it
// ended, not when it started: of two jobs beyond the keep count, one that
// started eight days ago and ended a moment ago survives, while one that
// ended eight days ago goes.
func TestAutoPruneKeepsRecentlyEnded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var dirs []string
	for i, name := range []string{"long", "old"} {
		j, err := c.Run(ctx, bg.Spec{Name: name, Argv: []string{"echo " + name}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Wait(ctx, []string{j.ID}, bg.WaitOptions{}); err != nil {
			t.Fatal(err)
		}
		// Move the job eight days into the past: a new id, meta.json and
		// name index to match; the old one also ended then.
		start := time.Now().Add(-8*24*time.Hour - time.Duration(i)*time.Minute)
		id := jobdir.NewID(start)
		dir := filepath.Join(root, "default", id)
		if err := os.Rename(j.Dir, dir); err != nil {
			t.Fatal(err)
		}
		m := j.Meta
		m.ID, m.StartedAt = id, start.UTC()
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "meta.json"), string(b)+"\n")
		write(t, filepath.Join(root, "default", ".names", name), id+"\n")
		if name == "old" {
			write(t, filepath.Join(dir, "ended_at"), start.Add(time.Second).UTC().Format(time.RFC3339)+"\n")
		}
		dirs = append(dirs, dir)
	}

	// Run's pass removes only jobs beyond the newest --keep ended ones and
	// ended more than 7 days ago: with a keep of 1 and a job that ended
	// after both, "long" and "old" are beyond the count, so their age
	// alone decides.
	fresh, err := c.Run(ctx, bg.Spec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{fresh.ID}, bg.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	pruner, err := bg.NewClient(local.New(), root, "", bg.WithAutoPrune(1, bg.DefaultMaxAge), bg.WithAutoPruneEvery(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pruner.Run(ctx, bg.Spec{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	gone := func() bool { _, err := os.Stat(dirs[1]); return os.IsNotExist(err) }
	if !eventually(10*time.Second, gone) {
		t.Fatal("the job that ended eight days ago was not pruned")
	}
	if !eventually(10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(root, "default", ".prune.lock"))
		return os.IsNotExist(err)
	}) {
		t.Fatal("the pruning pass did not end")
	}
	var out bytes.Buffer
	if _, err := c.Logs(ctx, "long", bg.LogOptions{}, &out, &out); err != nil || out.String() != "echo long\n"[5:] {
		t.Errorf("logs of the job that started eight days ago and ended just now: %q, %v", out.String(), err)
	}
	p, err := c.Prune(ctx, bg.PruneOptions{Keep: 1000, OlderThan: bg.DefaultMaxAge, DryRun: true})
	if err != nil || len(p) != 0 {
		t.Errorf("prune --dry-run after the pass: %d jobs (%v), want none: the job left ended a moment ago", len(p), err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
