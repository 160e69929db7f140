package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// queueRun runs a job with flags and returns its id.
func queueRun(t *testing.T, flags []string, args ...string) string {
	t.Helper()
	code, out, errs := bgjob(context.Background(), append(append(flags, "run", "-q"), args...)...)
	if code != 0 {
		t.Fatalf("run %v: exit %d: %s", args, code, errs)
	}
	return strings.TrimSpace(out)
}

// queueStatus returns the job id as status --json reports it.
func queueStatus(t *testing.T, flags []string, id string) jobdir.Job {
	t.Helper()
	code, out, errs := bgjob(context.Background(), append(flags, "status", "--json", id)...)
	var jobs []jobdir.Job
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("status %s: exit %d: %v: %s %s", id, code, err, out, errs)
	}
	return jobs[0]
}

// queueWait waits for the jobs and returns wait's exit status.
func queueWait(t *testing.T, flags []string, ids ...string) int {
	t.Helper()
	code, _, _ := bgjob(context.Background(), append(append(flags, "wait", "--timeout", "60s"), ids...)...)
	if code == 124 {
		_, out, _ := bgjob(context.Background(), append(flags, "ls", "--limit", "0")...)
		root := flags[slices.Index(flags, "--root")+1]
		entries, _ := filepath.Glob(filepath.Join(root, "*", ".queue", "*"))
		t.Fatalf("the jobs did not end within 60 s:\n%s\nqueue: %v", out, entries)
	}
	return code
}

// TestQueueSlots: jobs run with --slots 1 run one after another, in the
// order they were queued, each starting once the one before has ended;
// with --slots 2, two at a time and never three, locally and over SSH.
// The jobs record when they start and end (the host is this machine).
func TestQueueSlots(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testQueueSlots(t, tc.flags)
		})
	}
}

// testQueueSlots is TestQueueSlots on the host that flags reach.
func testQueueSlots(t *testing.T, flags []string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	gate := filepath.Join(dir, "gate")
	var ids []string
	for i := range 6 {
		cmd := fmt.Sprintf("echo start %d >>%s; sleep 0.2; echo end %d >>%s", i, log, i, log)
		if i == 0 {
			// The first holds its slot until all are queued.
			cmd = "while [ ! -e " + gate + " ]; do sleep 0.05; done; " + cmd
		}
		ids = append(ids, queueRun(t, flags, "--slots", "1", "--", cmd))
	}
	if j := queueStatus(t, flags, ids[5]); j.Status != jobdir.StatusQueued || j.Queued != "slot" {
		t.Errorf("the last of six jobs with one slot: %s %q, want queued for a slot", j.Status, j.Queued)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := queueWait(t, flags, ids...); code != 0 {
		t.Fatalf("wait: exit %d", code)
	}
	b, _ := os.ReadFile(log)
	var want []string
	for i := range 6 {
		want = append(want, fmt.Sprintf("start %d", i), fmt.Sprintf("end %d", i))
	}
	if got := strings.Fields(strings.ReplaceAll(string(b), " ", "_")); !slices.Equal(got, underscore(want)) {
		t.Errorf("one slot: the jobs ran\n%s\nwant one after another, in the order queued", b)
	}

	// Two slots: the jobs record their start and end on the
	// clock; at most two overlap, and two do. They wait for a
	// gate opened once all six are queued: on a loaded machine a
	// run can take longer than a job, and none would overlap.
	// This machine's date, which has %N (a host's own may not: busybox's
	// on the host without /proc).
	date, err := exec.LookPath("date")
	if err != nil {
		t.Fatal(err)
	}
	var two []string
	gate2 := filepath.Join(dir, "gate2")
	for i := range 6 {
		f := filepath.Join(dir, "t"+strconv.Itoa(i))
		two = append(two, queueRun(t, flags, "--slots", "2", "--", date+" +%s%N >"+f+"; while [ ! -e "+gate2+" ]; do sleep 0.05; done; sleep 0.2; "+date+" +%s%N >>"+f))
	}
	if err := os.WriteFile(gate2, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := queueWait(t, flags, two...); code != 0 {
		t.Fatalf("wait: exit %d", code)
	}
	type span struct{ from, to int64 }
	var spans []span
	for i := range 6 {
		b, _ := os.ReadFile(filepath.Join(dir, "t"+strconv.Itoa(i)))
		f := strings.Fields(string(b))
		if len(f) != 2 {
			t.Fatalf("job %d recorded %q", i, b)
		}
		from, _ := strconv.ParseInt(f[0], 10, 64)
		to, _ := strconv.ParseInt(f[1], 10, 64)
		spans = append(spans, span{from, to})
	}
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if o.from <= s.from && s.from < o.to {
				n++
			}
		}
		most = max(most, n)
	}
	if most != 2 {
		t.Errorf("two slots: at most %d jobs ran at once, want 2", most)
	}
}

// underscore joins each "start N" of want with an underscore, as the test
// reads the log.
func underscore(want []string) []string {
	out := make([]string, len(want))
	for i, w := range want {
		out[i] = strings.ReplaceAll(w, " ", "_")
	}
	return out
}

// TestQueueAfter: --after starts a job once its job has ended, whatever
// its status; --after-ok only if it exited 0, else the job ends not_run,
// never having run, and wait exits 1; a ref that names no job makes no
// job; a queued job that is stopped never runs, and the one behind it in
// the queue goes on. Locally and over SSH.
func TestQueueAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			gate := filepath.Join(dir, "gate")
			wait := "while [ ! -e " + gate + " ]; do sleep 0.05; done; "
			fails := queueRun(t, tc.flags, "-n", "fails", "--", wait+"exit 3")
			queueRun(t, tc.flags, "-n", "passes", "--", wait+"exit 0")
			ran := func(name string) string { return filepath.Join(dir, name) }
			after := queueRun(t, tc.flags, "--after", "fails", "--", "touch "+ran("after"))
			notRun := queueRun(t, tc.flags, "--after-ok", "fails", "--", "touch "+ran("notrun"))
			ok := queueRun(t, tc.flags, "--after-ok", "passes", "--after", fails, "--", "touch "+ran("ok"))
			if j := queueStatus(t, tc.flags, notRun); j.Status != jobdir.StatusQueued || j.Queued != "after "+fails {
				t.Errorf("a job after a running one: %s %q, want queued after %s", j.Status, j.Queued, fails)
			}
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if code := queueWait(t, tc.flags, after, ok); code != 0 {
				t.Errorf("wait for the jobs that should run: exit %d", code)
			}
			if code := queueWait(t, tc.flags, notRun); code != 1 {
				t.Errorf("wait for the job not run: exit %d, want 1", code)
			}
			for _, f := range []string{"after", "ok"} {
				if _, err := os.Stat(ran(f)); err != nil {
					t.Errorf("job %s did not run: %v", f, err)
				}
			}
			if _, err := os.Stat(ran("notrun")); err == nil {
				t.Errorf("the --after-ok job of a job that exited 3 ran")
			}
			j := queueStatus(t, tc.flags, notRun)
			if j.Status != jobdir.StatusNotRun || j.ExitCode != nil || j.Error != "job "+fails+" exited 3" {
				t.Errorf("the job not run: %s, exit %v, %q; want not_run, no exit code, job %s exited 3", j.Status, j.ExitCode, j.Error, fails)
			}

			// A ref that names no job: refused, no job made.
			code, _, errs := bgjob(ctx, append(tc.flags, "run", "--after-ok", "nosuch", "--", "true")...)
			if code == 0 || !strings.Contains(errs, "nosuch") {
				t.Errorf("run --after-ok nosuch: exit %d, %q; want an error naming it", code, errs)
			}
			if code, _, errs := bgjob(ctx, append(tc.flags, "run", "--slots", "0", "--", "true")...); code != 2 {
				t.Errorf("run --slots 0: exit %d, %q; want 2", code, errs)
			}

			// Stop a queued job: it never runs; the next goes on.
			hold := queueRun(t, tc.flags, "--slots", "1", "--", "sleep 60")
			stopped := queueRun(t, tc.flags, "--slots", "1", "--", "touch "+ran("stopped"))
			next := queueRun(t, tc.flags, "--slots", "1", "--", "touch "+ran("next"))
			if code, _, errs := bgjob(ctx, append(tc.flags, "stop", stopped)...); code != 0 {
				t.Fatalf("stop: exit %d: %s", code, errs)
			}
			if j := queueStatus(t, tc.flags, stopped); j.Status != jobdir.StatusKilled || j.Reason != "stop" || j.ExitCode == nil || *j.ExitCode != 143 {
				t.Errorf("a queued job stopped: %s %s %v, want killed (stop) 143", j.Status, j.Reason, j.ExitCode)
			}
			if code, _, errs := bgjob(ctx, append(tc.flags, "stop", hold)...); code != 0 {
				t.Fatalf("stop: exit %d: %s", code, errs)
			}
			if code := queueWait(t, tc.flags, next); code != 0 {
				t.Errorf("wait for the job behind the stopped one: exit %d", code)
			}
			if _, err := os.Stat(ran("stopped")); err == nil {
				t.Errorf("a job stopped while queued ran")
			}
			if _, err := os.Stat(ran("next")); err != nil {
				t.Errorf("the job queued behind a stopped one did not run: %v", err)
			}
		})
	}
}

// TestQueueCostsNothing: 50 jobs queued behind one that runs use no CPU
// while they wait: over two seconds their processes gain no clock tick
// (they sleep on a FIFO; nothing polls), once they have all got there.
func TestQueueCostsNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	flags := []string{"--root", root}
	queueRun(t, flags, "--slots", "1", "--", "sleep 60")
	var pids []int
	for range 50 {
		id := queueRun(t, flags, "--slots", "1", "--", "true")
		pids = append(pids, queueStatus(t, flags, id).PID)
	}
	ticks := func() int64 {
		var n int64
		for _, pid := range pids {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				t.Fatalf("a queued job's wrapper is gone: %v", err)
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			n += u + s
		}
		return n
	}
	// The last ones may still be on their way to the FIFO on a busy
	// host: the two seconds start once no tick came in half a second.
	before := ticks()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); {
		time.Sleep(500 * time.Millisecond)
		now := ticks()
		if now == before {
			break
		}
		before = now
	}
	time.Sleep(2 * time.Second)
	if used := ticks() - before; used > 0 {
		t.Errorf("50 queued jobs used %d clock ticks of CPU in 2 s, want 0", used)
	}
}

// TestQueueRacingSubmitters: six submitters race on one workspace: three
// run a slotted job each by a name of its own, three run slotted jobs
// --after one of those names, each trying again until the name resolves,
// which it does as soon as the job's meta.json is there. A job waited for is always ahead of its
// waiters in the queue, so every job ends: none waits for one queued
// behind it (the wedge: a waiter queued ahead of the job it waits for,
// both queued for ever). Twelve trials, locally and over SSH.
func TestQueueRacingSubmitters(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			for trial := range 12 {
				flags := append(slices.Clone(tc.flags), "-w", "race"+strconv.Itoa(trial))
				ids := make([]string, 6)
				errs := make(chan error, 6)
				for i := range 6 {
					go func() {
						ref := "ref" + strconv.Itoa(i%3)
						args := []string{"run", "-q", "--slots", "1", "-n", ref, "--", "true"}
						if i >= 3 {
							args = []string{"run", "-q", "--slots", "1", "--after", ref, "--", "true"}
						}
						for {
							code, out, e := bgjob(ctx, append(slices.Clone(flags), args...)...)
							if code == 0 {
								ids[i] = strings.TrimSpace(out)
								errs <- nil
								return
							}
							if i < 3 || !strings.Contains(e, ref) {
								errs <- fmt.Errorf("submitter %d: exit %d: %s", i, code, e)
								return
							}
						}
					}()
				}
				for range 6 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
				if code := queueWait(t, flags, ids...); code != 0 {
					t.Fatalf("trial %d: wait: exit %d", trial, code)
				}
			}
		})
	}
}

// TestQueueReportsWhatIs: run says a slotted job is queued only when it
// waits (one that finds a slot free starts at once, and is reported
// running), and an --after-ok job whose job has already failed is
// reported not run by run itself, never running: its turn is looked at
// before run reports it. A slotted job that waited starts (started_at,
// by the host's clock) when its command does, after the slot was freed;
// until then it has no start, and queued_at says when it was queued.
// Locally and over SSH.
func TestQueueReportsWhatIs(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			flags := append(slices.Clone(tc.flags), "-w", "reports")
			gate := filepath.Join(t.TempDir(), "gate")
			code, out, errs := bgjob(ctx, append(slices.Clone(flags), "run", "--slots", "1", "--", "while [ ! -e "+gate+" ]; do sleep 0.05; done")...)
			if code != 0 || strings.Contains(out, "queued") {
				t.Errorf("run --slots 1 on a free slot: exit %d, %q %s; want it started, not queued", code, out, errs)
			}
			var next jobdir.Job
			code, out, errs = bgjob(ctx, append(slices.Clone(flags), "run", "--json", "--slots", "1", "--", "true")...)
			if err := json.Unmarshal([]byte(out), &next); code != 0 || err != nil {
				t.Fatalf("run --json: exit %d, %v: %s %s", code, err, out, errs)
			}
			if next.Status != jobdir.StatusQueued || next.QueuedAt == nil || !next.StartedAt.IsZero() || strings.Contains(out, `,"started_at"`) {
				t.Errorf("a job behind a held slot: %s, queued_at %v, started_at %v; want queued, queued_at set, no start", next.Status, next.QueuedAt, next.StartedAt)
			}
			opened := time.Now().Truncate(time.Millisecond)
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if code := queueWait(t, flags, next.ID); code != 0 {
				t.Fatalf("wait: exit %d", code)
			}
			j := queueStatus(t, flags, next.ID)
			if j.QueuedAt == nil || !j.QueuedAt.Before(opened) || j.StartedAt.Before(opened) || j.EndedAt == nil || j.EndedAt.Before(j.StartedAt) {
				t.Errorf("the job that waited: queued_at %v, started_at %v, ended_at %v; want queued before the slot was freed (%v), started after",
					j.QueuedAt, j.StartedAt, j.EndedAt, opened)
			}
			if d, ok := j.Duration(time.Now()); !ok || d > j.EndedAt.Sub(opened) {
				t.Errorf("its duration: %v %v, want at most the %v since the slot was freed", d, ok, j.EndedAt.Sub(opened))
			}

			// --after-ok a job that has failed: not run, as run reports.
			bad := queueRun(t, flags, "-n", "bad", "--", "exit 3")
			if code := queueWait(t, flags, bad); code != 3 {
				t.Fatalf("wait bad: exit %d", code)
			}
			for i := range 5 {
				code, out, errs := bgjob(ctx, append(slices.Clone(flags), "run", "--json", "--after-ok", "bad", "--", "true")...)
				var j jobdir.Job
				if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil {
					t.Fatalf("run --json: exit %d, %v: %s %s", code, err, out, errs)
				}
				if j.Status != jobdir.StatusNotRun {
					t.Errorf("run %d --after-ok a job that exited 3 reported %s, want not_run", i, j.Status)
				}
				if j := queueStatus(t, flags, j.ID); j.Status != jobdir.StatusNotRun || !j.StartedAt.IsZero() {
					t.Errorf("then status: %s, started_at %v; want not_run, no start", j.Status, j.StartedAt)
				}
			}
			code, out, _ = bgjob(ctx, append(slices.Clone(flags), "run", "--after-ok", "bad", "--", "true")...)
			if code != 0 || !strings.Contains(out, "status: not_run (job "+bad+" exited 3)") {
				t.Errorf("run --after-ok bad said %q, want its status not_run", out)
			}
		})
	}
}

// TestQueueAfterOKReadsExitCodeTmp: a job whose status is in exit_code.tmp
// alone (a stop killed its wrapper's rename; docs/format.md) ended with
// that status for --after-ok too, as for every other reader: a job after
// one that exited 0 runs, one after one that exited 5 is not run because
// of it, not because the job was "lost".
func TestQueueAfterOKReadsExitCodeTmp(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok := queueRun(t, tc.flags, "--", "exit 0")
			five := queueRun(t, tc.flags, "--", "exit 5")
			queueWait(t, tc.flags, ok, five)
			for _, id := range []string{ok, five} {
				d := queueStatus(t, tc.flags, id).Dir
				if err := os.Rename(filepath.Join(d, "exit_code"), filepath.Join(d, "exit_code.tmp")); err != nil {
					t.Fatal(err)
				}
				if j := queueStatus(t, tc.flags, id); j.Status != jobdir.StatusExited {
					t.Fatalf("status of %s with exit_code.tmp alone: %s, want exited", id, j.Status)
				}
			}
			ran := filepath.Join(t.TempDir(), "ran")
			after := queueRun(t, tc.flags, "--after-ok", ok, "--", "touch "+ran)
			notRun := queueRun(t, tc.flags, "--after-ok", five, "--", "true")
			if code := queueWait(t, tc.flags, after); code != 0 {
				t.Errorf("the job after one that exited 0: wait exit %d, want 0 (%+v)", code, queueStatus(t, tc.flags, after))
			}
			if _, err := os.Stat(ran); err != nil {
				t.Errorf("the job after one that exited 0 did not run: %v", err)
			}
			queueWait(t, tc.flags, notRun)
			if j := queueStatus(t, tc.flags, notRun); j.Status != jobdir.StatusNotRun || j.Error != "job "+five+" exited 5" {
				t.Errorf("the job after one that exited 5: %s %q, want not_run, job %s exited 5", j.Status, j.Error, five)
			}
		})
	}
}
