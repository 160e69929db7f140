package shellgen_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/shellgen"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
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
