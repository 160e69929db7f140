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

	"github.com/bgjob/bgjob/bench/fixture"
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
// once report each job removed by one of them, never both, and together
// all of them: a remover reports a job removed only where its own unlink
// of the directory succeeded (one find -delete for a batch; an rmdir each
// where find has no -delete, as busybox's). Each pair is run with both
// prunes on find, both without it, and one of each.
func TestTwoPrunesRemoveEachJobOnce(t *testing.T) {
	t.Parallel()
	realFind, err := exec.LookPath("find")
	if err != nil {
		t.Fatal(err)
	}
	// A find that knows no -delete, as busybox's: it refuses the call.
	bin := t.TempDir()
	fake := "#!/bin/sh\nfor a; do [ \"$a\" != -delete ] || { echo 'find: unrecognized: -delete' >&2; exit 1; }; done\nexec " + realFind + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "find"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	noDelete := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	exe := bgjobBinary(t)
	for _, pair := range [][2]bool{{false, false}, {true, true}, {false, true}} {
		t.Run(fmt.Sprintf("without-delete=%v,%v", pair[0], pair[1]), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			t.Cleanup(func() { killAll(root) })
			g := []string{"--root", root}
			for round := range 3 {
				ids := endedJobs(t, g, 30)
				var (
					wg  sync.WaitGroup
					mu  sync.Mutex
					got = map[string]int{}
				)
				for _, without := range pair {
					wg.Go(func() {
						cmd := exec.Command(exe, append(g, "prune", "--all", "--json")...)
						if without {
							cmd.Env = append(os.Environ(), noDelete)
						}
						var errb strings.Builder
						cmd.Stderr = &errb
						out, err := cmd.Output()
						if err != nil {
							t.Errorf("prune: %v: %s", err, errb.String())
							return
						}
						var pr struct{ Jobs []jobdir.Job }
						if err := json.Unmarshal(out, &pr); err != nil {
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
		})
	}
}

// TestRemoveLooksInsideCursorLocks: a reader's cursor lock directory in a
// job is removed with the job only when it holds its owner files alone;
// anything else in it (a file of the user's) makes rm refuse the job,
// as any file bgjob did not write does, and nothing of it is deleted.
func TestRemoveLooksInsideCursorLocks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	ids := endedJobs(t, g, 4)
	dir := func(id string) string { return filepath.Join(root, jobdir.DefaultWorkspace, id) }
	for i, id := range ids[:2] {
		lock := filepath.Join(dir(id), "cursor-r.lock.d")
		if err := os.Mkdir(lock, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lock, "owner"), []byte("1 2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := os.WriteFile(filepath.Join(lock, "thesis.tex"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code, _, errs := bgjob(ctx, append(g, "rm", ids[0])...); code != 0 {
		t.Errorf("rm of a job with a cursor lock holding its owner: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dir(ids[0])); !os.IsNotExist(err) {
		t.Errorf("the job with its cursor lock was not removed: %v", err)
	}
	code, _, errs := bgjob(ctx, append(g, "rm", ids[1])...)
	if code == 0 || !strings.Contains(errs, "did not write") {
		t.Errorf("rm of a job whose cursor lock holds a file of the user's: exit %d, stderr %q; want it refused", code, errs)
	}
	for _, f := range []string{"meta.json", "stdout.log", "cursor-r.lock.d/thesis.tex"} {
		if _, err := os.Stat(filepath.Join(dir(ids[1]), f)); err != nil {
			t.Errorf("after the refused rm: %s: %v", f, err)
		}
	}
	// A directory of the user's named as bgjob names its files, beside a
	// file whose name holds a newline (removed by pattern), or alone: the
	// job is refused before anything of it is deleted.
	for i, names := range [][2]string{{"cursor-keep", "cursor-a\nb"}, {"leftovers.tmpX", ""}} {
		id := ids[2+i]
		if err := os.Mkdir(filepath.Join(dir(id), names[0]), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir(id), names[0], "precious"), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		if names[1] != "" {
			if err := os.WriteFile(filepath.Join(dir(id), names[1]), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		code, _, errs := bgjob(ctx, append(g, "rm", id)...)
		if code == 0 || !strings.Contains(errs, "did not write") {
			t.Errorf("rm of a job holding the directory %s of the user's: exit %d, stderr %q; want it refused", names[0], code, errs)
		}
		for _, f := range []string{"meta.json", "stdout.log", "exit_code", names[0] + "/precious"} {
			if _, err := os.Stat(filepath.Join(dir(id), f)); err != nil {
				t.Errorf("after the refused rm of the job holding %s: %s: %v", names[0], f, err)
			}
		}
	}
}

// endedJobs runs n jobs of "exit 0" with the global flags g and returns
// their ids once all have ended.
func endedJobs(t *testing.T, g []string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for range n {
		code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", "exit 0")...)
		if code != 0 {
			t.Fatalf("run: %d %s", code, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	if code, _, errs := bgjob(ctx, append(append(g, "wait"), ids...)...); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	return ids
}

// TestRemovalCutShortTellsWhatItRemoved: a prune or rm that its host's
// time (--host-timeout) cuts short in the middle of its removals has
// printed every job it removed, and only those, or named it in its error
// as one whose removal was under way: each job printed is gone, and each
// job gone was printed or named. It used to print nothing, for thousands
// of jobs removed. A find that stalls at its second -delete, before it
// deletes or after, holds the removal in its second batch of jobs (32
// KiB of paths): after, the batch is gone and not yet told.
func TestRemovalCutShortTellsWhatItRemoved(t *testing.T) {
	t.Parallel()
	realFind, err := exec.LookPath("find")
	if err != nil {
		t.Fatal(err)
	}
	exe := bgjobBinary(t)
	for _, verb := range []string{"prune", "rm"} {
		for _, stall := range []string{"before", "after"} {
			t.Run(verb+"/"+stall, func(t *testing.T) {
				t.Parallel()
				bin := t.TempDir()
				calls := filepath.Join(bin, "calls")
				run := "exec " + realFind + " \"$@\"\n"
				if stall == "after" {
					run = realFind + " \"$@\"\nst=$?\n[ -z \"$del\" ] || [ \"$(wc -l <" + calls + ")\" -lt 2 ] || sleep 60\nexit $st\n"
				}
				fake := "#!/bin/sh\ndel=\nfor a; do\n\tif [ \"$a\" = -delete ]; then\n\t\tdel=1\n\t\techo >>" + calls + "\n"
				if stall == "before" {
					fake += "\t\t[ \"$(wc -l <" + calls + ")\" -lt 2 ] || exec sleep 60\n"
				}
				fake += "\tfi\ndone\n" + run
				if err := os.WriteFile(filepath.Join(bin, "find"), []byte(fake), 0o755); err != nil {
					t.Fatal(err)
				}
				root := t.TempDir()
				ids, err := fixture.Make(fixture.Options{Root: root, Workspace: jobdir.DefaultWorkspace, N: 200})
				if err != nil {
					t.Fatal(err)
				}
				args := []string{"--root", root, "--host-timeout", "3s", "prune", "--all"}
				if verb == "rm" {
					args = append([]string{"--root", root, "--host-timeout", "3s", "rm"}, ids...)
				}
				cmd := exec.Command(exe, args...)
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
				var errb strings.Builder
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err == nil {
					t.Fatalf("%s: exit 0, want it cut short by --host-timeout: %s", verb, errb.String())
				}
				told := map[string]bool{}
				for _, id := range strings.Fields(string(out)) {
					told[id] = true
				}
				if len(told) == 0 || len(told) >= len(ids) {
					t.Fatalf("%s cut short printed %d of %d jobs, want some and not all (stderr %s)", verb, len(told), len(ids), errb.String())
				}
				_, named, found := strings.Cut(errb.String(), "which may be gone: ")
				if !found {
					t.Fatalf("%s cut short in a batch: stderr %q, want the jobs whose removal was under way named", verb, errb.String())
				}
				named, _, _ = strings.Cut(named, ":")
				maybe := map[string]bool{}
				for _, id := range strings.Fields(named) {
					maybe[id] = true
				}
				for _, id := range ids {
					_, err := os.Lstat(filepath.Join(root, jobdir.DefaultWorkspace, id))
					switch gone := os.IsNotExist(err); {
					case told[id] && !gone:
						t.Errorf("job %s printed as removed, but its directory is there", id)
					case told[id] && maybe[id]:
						t.Errorf("job %s printed as removed and named as perhaps removed", id)
					case gone && !told[id] && !maybe[id]:
						t.Errorf("job %s removed, but neither printed nor named", id)
					}
				}
				if stall == "after" && len(maybe) == 0 {
					t.Errorf("a batch removed and not told: none named (stderr %q)", errb.String())
				}
			})
		}
	}
}
