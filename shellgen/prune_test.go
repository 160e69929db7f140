package shellgen_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestPruneRule runs prune.sh's rule under every shell on four ended jobs,
// two that ended 10 days ago, one an hour ago and one just now: 0 is no
// limit for --keep as for --older-than (prune --keep 0 removed every ended
// job), All removes every ended job, and limits that select nothing, or
// All with a limit, are refused.
func TestPruneRule(t *testing.T) {
	now := time.Now()
	ended := []time.Duration{10 * 24 * time.Hour, 10*24*time.Hour - time.Minute, time.Hour, 0}
	tests := []struct {
		name string
		p    shellgen.Prune
		want []int // indexes into ended
	}{
		{"keep 0 prunes by age alone", shellgen.Prune{Keep: 0, OlderThan: 7 * 24 * time.Hour}, []int{0, 1}},
		{"older than 0 prunes by count alone", shellgen.Prune{Keep: 1, OlderThan: 0}, []int{0, 1, 2}},
		{"either limit", shellgen.Prune{Keep: 3, OlderThan: 7 * 24 * time.Hour}, []int{0, 1}},
		{"either limit, count first", shellgen.Prune{Keep: 1, OlderThan: 7 * 24 * time.Hour}, []int{0, 1, 2}},
		{"all", shellgen.Prune{All: true}, []int{0, 1, 2, 3}},
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					root := filepath.Join(t.TempDir(), "root")
					var ids []string
					for _, ago := range ended {
						at := now.Add(-ago)
						m := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{StartedAt: at.Add(-time.Second)}, EndedAt: at}).Meta
						ids = append(ids, m.ID)
					}
					p := tt.p
					p.DryRun = true
					s, err := shellgen.PruneScript(shellgen.Target{Root: root, Workspace: "w"}, p)
					if err != nil {
						t.Fatal(err)
					}
					jobs, refused := runJobs(t, sh, s)
					var want, got []string
					for _, i := range tt.want {
						want = append(want, ids[i])
					}
					for id := range jobs {
						got = append(got, id)
					}
					slices.Sort(want)
					slices.Sort(got)
					if !slices.Equal(got, want) || len(refused) != 0 {
						t.Errorf("%+v selects %v (refused %v), want %v", tt.p, got, refused, want)
					}
				})
			}
		})
	}
	for _, p := range []shellgen.Prune{{}, {All: true, Keep: 1}, {All: true, OlderThan: time.Hour}, {Keep: -1, OlderThan: time.Hour}} {
		if _, err := shellgen.PruneScript(shellgen.Target{Workspace: "w"}, p); err == nil {
			t.Errorf("PruneScript(%+v) made a script, want an error", p)
		}
	}
}

// TestLeftoversNotIntoARemoval: a look that found an ended job without
// processes does not record so (leftovers) into its directory once a
// removal has begun (meta.json gone): the record kept the emptied
// directory alive, a job without meta.json, and the removal said it held
// files bgjob did not write.
func TestLeftoversNotIntoARemoval(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			target := shellgen.Target{Root: root, Workspace: "w"}
			job := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited})
			// The removal comes as the record is moved into place, after
			// the look found the job without processes: it empties the
			// directory but for the record being written.
			removed := filepath.Join(t.TempDir(), "removed")
			shadow(t, "mv", func(real string) string {
				return "case $* in *" + job.Path + "/leftovers*) [ -e " + removed + " ] || { : >" + removed + "; rm -f " + job.Path + "/meta.json; for f in " + job.Path + "/*; do case $f in *leftovers.tmp*) ;; *) rm -f \"$f\" ;; esac; done; } ;; esac\nexec " + real + " \"$@\"\n"
			})
			status, err := shellgen.StatusScript(target, []string{job.Meta.ID})
			if err != nil {
				t.Fatal(err)
			}
			// A process of the user caught in the middle of an exec (other
			// tests') declines the record (the blank rule): looks again
			// for a while, since a busy host's tests exec all the time.
			runScript(t, &sh, t.TempDir(), nil, status)
			for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if _, err := os.Stat(removed); err == nil {
					break
				}
				runScript(t, &sh, t.TempDir(), nil, status)
			}
			if _, err := os.Stat(removed); err != nil {
				t.Fatalf("the look recorded no leftovers: %v", err)
			}
			left, _ := filepath.Glob(filepath.Join(job.Path, "*"))
			if len(left) > 0 {
				t.Errorf("the removed job's directory holds %q, want nothing", left)
			}
		})
	}
}

// TestLaunchUnderWayByItsDirectory: whether a directory without meta.json
// is a launch under way (ls passes over it, prune keeps it) or one cut
// short (ls lists it, prune removes it) is told by when the directory last
// changed, by the host's clock, not by the time its id names: a run
// --replace makes the directory only after it has stopped the jobs of its
// name, which can take longer than a minute, and prune removed such a
// launch between its mkdir and its meta.json, leaving its job to run
// unseen.
func TestLaunchUnderWayByItsDirectory(t *testing.T) {
	now := time.Now()
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			creating := func(named, changed time.Time) string {
				d := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Creating, Meta: jobdir.Meta{StartedAt: named}})
				if err := os.Chtimes(d.Path, changed, changed); err != nil {
					t.Fatal(err)
				}
				return d.Meta.ID
			}
			// Busybox's find counts whole minutes: three is past its two.
			late := creating(now.Add(-time.Hour), now)
			ahead := creating(now.Add(30*time.Second), now.Add(-3*time.Minute))
			cut := creating(now.Add(-time.Hour), now.Add(-time.Hour))
			target := shellgen.Target{Root: root, Workspace: "w"}
			s, err := shellgen.ListScript(target, shellgen.List{})
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := runJobs(t, sh, s)
			if _, ok := jobs[late]; ok || len(jobs) != 2 || jobs[ahead].Status != jobdir.StatusUnreadable || jobs[cut].Status != jobdir.StatusUnreadable {
				t.Errorf("ls lists %v; want %s and %s unreadable, not the launch under way %s", slices.Collect(maps.Keys(jobs)), ahead, cut, late)
			}
			if s, err = shellgen.PruneScript(target, shellgen.Prune{All: true}); err != nil {
				t.Fatal(err)
			}
			runJobs(t, sh, s)
			for id, want := range map[string]bool{late: true, ahead: false, cut: false} {
				_, err := os.Stat(filepath.Join(root, "w", id))
				if got := err == nil; got != want {
					t.Errorf("after prune, %s is there: %v, want %v (%v)", id, got, want, err)
				}
			}
		})
	}
}
