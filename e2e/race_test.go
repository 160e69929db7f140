package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
)

// TestRaceOneWorkspace: 100 run, stop, ls and prune calls race on one
// workspace. Every run gets a unique id and an intact meta.json; no single
// ls reports a job twice or a torn meta.json; and once everything has
// settled, ls reports every job that was started exactly once, except those
// prune removed, which had all ended.
//
// It is not parallel to the other tests: it makes its own load, and the
// local runtime gives a script's output only 2s (WaitDelay) to drain.
func TestRaceOneWorkspace(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	cmds := []string{"exit 0", "exit 3", "sleep 0.3", "sleep 60"}

	// A few jobs exist before the race, so that stop and prune have
	// something to act on from the start.
	var pre []string
	for i := range 8 {
		code, out, errs := bgjob(ctx, append(g, "run", "-q", "-n", fmt.Sprintf("n%d", i%4), "--", cmds[i%len(cmds)])...)
		if code != 0 {
			t.Fatalf("run: %d %s", code, errs)
		}
		pre = append(pre, strings.TrimSpace(out))
	}

	type listing struct {
		Jobs []jobdir.Job `json:"jobs"`
	}
	var (
		mu      sync.Mutex
		started = append([]string(nil), pre...)
		pruned  = map[string]jobdir.Job{}
		// halfGone: the jobs an ls saw without meta.json, which must be
		// jobs prune was deleting; a launch under way is not listed.
		halfGone = map[string]bool{}
		wg       sync.WaitGroup
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case i%10 < 5: // 50 runs
				code, out, errs := bgjob(ctx, append(g, "run", "-q", "-n", fmt.Sprintf("n%d", i%4), "--", cmds[i%len(cmds)])...)
				if code != 0 {
					t.Errorf("run %d: exit %d: %s", i, code, errs)
					return
				}
				mu.Lock()
				started = append(started, strings.TrimSpace(out))
				mu.Unlock()
			case i%10 < 7: // 20 stops, by name or --all
				args := append(g, "stop", "--grace", "200ms", fmt.Sprintf("n%d", i%4))
				if i%3 == 0 {
					args = append(g, "stop", "--grace", "200ms", "--all")
				}
				// A job may be pruned between being found and being
				// stopped; only a crash or a usage error is wrong here.
				if code, _, errs := bgjob(ctx, args...); code > 1 {
					t.Errorf("stop %d: exit %d: %s", i, code, errs)
				}
			case i%10 < 9: // 20 ls
				code, out, errs := bgjob(ctx, append(g, "ls", "--json", "--limit", "0")...)
				if code != 0 {
					t.Errorf("ls %d: exit %d: %s", i, code, errs)
					return
				}
				var l listing
				if err := json.Unmarshal([]byte(out), &l); err != nil {
					t.Errorf("ls %d: %v: %q", i, err, out)
					return
				}
				seen := map[string]bool{}
				for _, j := range l.Jobs {
					if seen[j.ID] {
						t.Errorf("ls %d reports job %s twice", i, j.ID)
					}
					seen[j.ID] = true
					// A job prune is deleting may be reported as
					// unreadable with meta.json missing (checked
					// below); any other unreadable job is a torn
					// meta.json.
					if j.Status == jobdir.StatusUnreadable {
						if j.Error != "meta.json is missing" {
							t.Errorf("ls %d: job %s unreadable: %s", i, j.ID, j.Error)
						}
						mu.Lock()
						halfGone[j.ID] = true
						mu.Unlock()
					}
				}
			default: // 10 prunes
				code, out, errs := bgjob(ctx, append(g, "prune", "--keep", "3", "--older-than", "0", "--json")...)
				// Two prunes may pick the same job; only one removes it.
				if code > 1 {
					t.Errorf("prune %d: exit %d: %s", i, code, errs)
					return
				}
				var pr struct{ Jobs []jobdir.Job }
				if err := json.Unmarshal([]byte(out), &pr); err != nil {
					t.Errorf("prune %d: %v: %q", i, err, out)
					return
				}
				mu.Lock()
				for _, j := range pr.Jobs {
					if _, dup := pruned[j.ID]; dup {
						t.Errorf("job %s pruned twice", j.ID)
					}
					pruned[j.ID] = j
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	// Settle: stop what still runs.
	if code, _, errs := bgjob(ctx, append(g, "stop", "--all", "--grace", "200ms")...); code != 0 {
		t.Fatalf("final stop: %d %s", code, errs)
	}
	code, out, errs := bgjob(ctx, append(g, "ls", "--json", "--limit", "0")...)
	if code != 0 {
		t.Fatalf("final ls: %d %s", code, errs)
	}
	var final listing
	if err := json.Unmarshal([]byte(out), &final); err != nil {
		t.Fatal(err)
	}

	ids := map[string]bool{}
	for _, id := range started {
		if !jobdir.IsID(id) || ids[id] {
			t.Errorf("bad or duplicate id %q", id)
		}
		ids[id] = true
	}
	if len(started) != 8+50 {
		t.Errorf("%d jobs started, want 58", len(started))
	}
	listed := map[string]int{}
	for _, j := range final.Jobs {
		listed[j.ID]++
		// Lost is tolerated: concurrent stops can kill the wrapper's own
		// mv of exit_code (reported on issue 4); running or unreadable
		// is not.
		if !j.Status.Ended() {
			t.Errorf("after settling, job %s is %s (%s): %s", j.ID, j.Status, j.Error, dumpDir(j.Dir))
		}
		if !ids[j.ID] {
			t.Errorf("ls reports job %s that was never started", j.ID)
		}
	}
	for id, j := range pruned {
		if !ids[id] {
			t.Errorf("prune removed job %s that was never started", id)
		}
		if !j.Status.Ended() {
			t.Errorf("prune removed job %s while it was %s", id, j.Status)
		}
		if listed[id] > 0 {
			t.Errorf("job %s was pruned but is still listed", id)
		}
		if _, err := os.Stat(j.Dir); !os.IsNotExist(err) {
			t.Errorf("job %s was pruned but its directory remains: %v", id, err)
		}
	}
	for _, id := range started {
		_, gone := pruned[id]
		if n := listed[id]; n != 1 && !gone {
			t.Errorf("job %s listed %d times after settling, want once", id, n)
		}
	}
	// Every listed job has an intact meta.json, and no directory was left
	// behind without one.
	entries, _ := os.ReadDir(filepath.Join(root, jobdir.DefaultWorkspace))
	// Job directories are named by id; .names is the name index.
	dirs := slices.DeleteFunc(entries, func(d os.DirEntry) bool { return !jobdir.IsID(d.Name()) })
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(root, jobdir.DefaultWorkspace, d.Name(), jobdir.MetaFile))
		if err != nil {
			t.Errorf("job directory %s: %v", d.Name(), err)
			continue
		}
		m, err := jobdir.DecodeMeta(b)
		if err != nil || m.ID != d.Name() || m.PID <= 1 || m.BootID == "" || m.Command == "" {
			t.Errorf("meta.json of %s is not intact: %v %q", d.Name(), err, b)
		}
	}
	if len(dirs) != len(final.Jobs) {
		t.Errorf("%d job directories, %d listed jobs", len(dirs), len(final.Jobs))
	}
	for id := range halfGone {
		if _, ok := pruned[id]; !ok {
			t.Errorf("ls reported job %s without meta.json, and no prune removed it: a launch under way listed as unreadable", id)
		}
	}
	t.Logf("%d started, %d pruned, %d listed at the end; %d seen half-deleted", len(started), len(pruned), len(final.Jobs), len(halfGone))
}

// dumpDir describes the files of a job directory, for failure messages.
func dumpDir(dir string) string {
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	for _, e := range entries {
		c, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(c) > 300 {
			c = c[:300]
		}
		fmt.Fprintf(&b, "\n\t%s: %q", e.Name(), c)
	}
	return b.String()
}

// TestTwoPrunesRemoveEachJobOnce: two prunes of the same ended jobs at
// once report each job removed by one of them, never both (bg_rm's
// removers take turns), and together all of them.
func TestTwoPrunesRemoveEachJobOnce(t *testing.T) {
	t.Parallel()
	twoPrunes(t)
}

// TestTwoPrunesWithoutTheLock: where the removers' lock cannot be made (a
// full disk refuses the mkdir; here a mkdir on PATH that refuses it), two
// prunes at once still report each job removed by one of them: each
// directory goes by an rmdir of its own, which one remover's wins.
//
// Not parallel: it puts a mkdir first on PATH.
func TestTwoPrunesWithoutTheLock(t *testing.T) {
	realMkdir, err := exec.LookPath("mkdir")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fake := "#!/bin/sh\ncase \"$*\" in *.rm.lock*) echo 'mkdir: No space left on device' >&2; exit 1 ;; esac\nexec " + realMkdir + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "mkdir"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	twoPrunes(t)
}

// twoPrunes: three rounds of 30 ended jobs, each pruned by two prunes at
// once; each job is reported removed once.
func twoPrunes(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	for round := range 3 {
		var ids []string
		for range 30 {
			code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", "exit 0")...)
			if code != 0 {
				t.Fatalf("run: %d %s", code, errs)
			}
			ids = append(ids, strings.TrimSpace(out))
		}
		if code, _, errs := bgjob(ctx, append(append(g, "wait"), ids...)...); code != 0 {
			t.Fatalf("wait: %d %s", code, errs)
		}
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got = map[string]int{}
		)
		for range 2 {
			wg.Go(func() {
				code, out, errs := bgjob(ctx, append(g, "prune", "--all", "--json")...)
				if code != 0 {
					t.Errorf("prune: exit %d: %s", code, errs)
					return
				}
				var pr struct{ Jobs []jobdir.Job }
				if err := json.Unmarshal([]byte(out), &pr); err != nil {
					t.Errorf("prune: %v: %q", err, out)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, j := range pr.Jobs {
					got[j.ID]++
				}
			})
		}
		wg.Wait()
		for _, id := range ids {
			if got[id] != 1 {
				t.Errorf("round %d: job %s reported removed %d times, want once", round, id, got[id])
			}
		}
	}
}
