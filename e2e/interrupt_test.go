package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/jobdir"
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
