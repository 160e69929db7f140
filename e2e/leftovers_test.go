package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestLeftoversRecord: the first look at an ended job that finds none of
// its processes alive, in a scan made after it ended, records that (the
// leftovers file): later looks (status, ls, wait) do not scan the host's
// processes (a grep of /proc/*/environ costs more the busier the host),
// and still say 0. A job that left processes is not recorded, so an
// escapee that forks and dies after the job ended leaves its child
// counted, never 0 while it lives. An ls that saw jobs end after its scan
// records them with a second scan, so the next ls does not scan at all.
//
// Not parallel: it puts a grep that logs its /proc reads first on PATH.
func TestLeftoversRecord(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	realGrep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	scans := filepath.Join(t.TempDir(), "scans")
	fake := "#!/bin/sh\ncase \"$*\" in *BGJOB_JOB_ID*/proc/*) echo scan >>" + scans + " ;; esac\nexec " + realGrep + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "grep"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The scripts' scans are what the grep counts: no look made in Go
	// (TestNativeLooksAtProcesses holds those to the scripts).
	t.Setenv(local.CheckEnv, "off")

	run := func(command string) string {
		t.Helper()
		code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", command)...)
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs)
		}
		id := strings.TrimSpace(out)
		if code, _, errs := bgjob(ctx, append(g, "wait", id)...); code != 0 {
			t.Fatalf("wait: exit %d: %s", code, errs)
		}
		return id
	}
	recorded := func(ws, id string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, ws, id, "leftovers"))
		if err != nil {
			return "none"
		}
		return strings.TrimSpace(string(b))
	}
	status := func(id string) jobdir.Job {
		t.Helper()
		code, out, errs := bgjob(ctx, append(g, "status", "--json", id)...)
		if code != 0 {
			t.Fatalf("status: exit %d: %s", code, errs)
		}
		var j []jobdir.Job
		if err := json.Unmarshal([]byte(out), &j); err != nil || len(j) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		return j[0]
	}
	scanned := func() bool {
		_, err := os.Stat(scans)
		os.Remove(scans)
		return err == nil
	}

	alone := run("echo hi")
	// The wait saw it end, then scanned, and recorded.
	if !scanned() || recorded(jobdir.DefaultWorkspace, alone) != "0" {
		t.Fatalf("the wait that saw the job end did not scan and record it")
	}
	for i, want := range []bool{false, false} {
		if j := status(alone); j.Status != jobdir.StatusExited || j.LiveProcesses != 0 || j.ProcessScan != "" {
			t.Errorf("status: %s, %d live, scan %q; want exited, 0, counted", j.Status, j.LiveProcesses, j.ProcessScan)
		}
		if got := scanned(); got != want {
			t.Errorf("look %d at an ended job: scanned %v, want %v", i+1, got, want)
		}
		if n := recorded(jobdir.DefaultWorkspace, alone); n != "0" {
			t.Errorf("after look %d the job's leftovers record is %q, want 0", i+1, n)
		}
	}
	// Without the record (a job of an earlier version, or one removed by
	// hand) the look scans, and records.
	if err := os.Remove(filepath.Join(root, jobdir.DefaultWorkspace, alone, "leftovers")); err != nil {
		t.Fatal(err)
	}
	status(alone)
	if !scanned() || recorded(jobdir.DefaultWorkspace, alone) != "0" {
		t.Fatalf("status of an ended job without the record did not scan and record it")
	}

	// An escapee alive at the end forks a child of its own and dies.
	dir := t.TempDir()
	p, c := filepath.Join(dir, "p"), filepath.Join(dir, "c")
	forker := run(`setsid sh -c 'echo $$ >` + p + `; while [ ! -e ` + p + `.go ]; do sleep 0.05; done; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >` + c + `' </dev/null >/dev/null 2>&1 &`)
	// The escapee, and the sleep of its loop now and then.
	if j := status(forker); j.LiveProcesses < 1 {
		t.Fatalf("status of a job that left an escapee: %d live processes, want it counted", j.LiveProcesses)
	}
	if n := recorded(jobdir.DefaultWorkspace, forker); n != "none" {
		t.Fatalf("a job that left an escapee was recorded with %q leftovers", n)
	}
	if err := os.WriteFile(p+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var child int
	if !eventually(10*time.Second, func() bool {
		b, err := os.ReadFile(c)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0
	}) {
		t.Fatal("the escapee never forked")
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	pb, _ := os.ReadFile(p)
	parent, _ := strconv.Atoi(strings.TrimSpace(string(pb)))
	if !eventually(10*time.Second, func() bool { return syscall.Kill(parent, 0) != nil }) {
		t.Fatal("the escapee that forked did not end")
	}
	if j := status(forker); j.LiveProcesses != 1 {
		t.Errorf("status after the escapee forked and died: %d live processes, want 1 (its child)", j.LiveProcesses)
	}

	// ls: a running job makes the scan; the jobs seen ended after it
	// are recorded by a second one; once the running job has ended too,
	// ls scans once more (to record it), then no more.
	lg := append(g, "-w", "ls")
	ids := endedJobs(t, lg, 3)
	// The wait may have found them ended at its first look, and recorded
	// them all: the ls below must find them unrecorded.
	for _, id := range ids {
		os.Remove(filepath.Join(root, "ls", id, "leftovers"))
	}
	code, out, errs := bgjob(ctx, append(lg, "run", "-q", "--stdin", "--", "cat")...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	running := strings.TrimSpace(out)
	ls := func() {
		t.Helper()
		if code, _, errs := bgjob(ctx, append(lg, "ls", "--limit", "0")...); code != 0 {
			t.Fatalf("ls: exit %d: %s", code, errs)
		}
	}
	scanned()
	ls()
	if !scanned() {
		t.Errorf("ls with a running job did not scan")
	}
	for _, id := range ids {
		if n := recorded("ls", id); n != "0" {
			t.Errorf("after ls, the ended job %s is recorded %q, want 0", id, n)
		}
	}
	if code, _, errs := bgjob(ctx, append(lg, "send", "--eof", running)...); code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	if code, _, errs := bgjob(ctx, append(lg, "wait", running)...); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errs)
	}
	ls()
	scanned()
	ls()
	if scanned() {
		t.Errorf("ls of ended jobs, all recorded, scanned the host's processes")
	}
}

// TestLeftoversForkDuringScan: an escapee that forks a child and exits
// while status calls follow one another is never recorded as leaving
// nothing while the child lives. A scan is no snapshot (the child forked
// after it listed the processes, the parent gone before it read it), so
// the record takes two scans; with one, 2 runs of 8 were recorded 0 with
// the child alive.
func TestLeftoversForkDuringScan(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	g := []string{"--root", root}
	for i := range 6 {
		code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", `setsid sh -c "sleep 0.`+strconv.Itoa(3+i)+`; setsid sleep 120 </dev/null >/dev/null 2>&1 & exit 0" </dev/null >/dev/null 2>&1 & exit 0`)...)
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs)
		}
		id := strings.TrimSpace(out)
		record := filepath.Join(root, jobdir.DefaultWorkspace, id, "leftovers")
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			bgjob(ctx, append(g, "status", id)...)
			if _, err := os.Stat(record); err == nil {
				break
			}
		}
		if _, err := os.Stat(record); err != nil {
			continue
		}
		// Recorded: no process carrying the job's id may be alive.
		envs, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range envs {
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), "BGJOB_JOB_ID="+id+"\x00") {
				t.Errorf("run %d: job %s recorded without processes, while %s lives", i, id, filepath.Dir(p))
			}
		}
	}
}

// TestLeftoversNotBesideABlankProcess: a process whose environment reads
// empty may be one of the job's caught in an exec (the kernel shows the
// new environment only once the exec has laid it out): while one of the
// user's, started since the job, is there, the job is not recorded as
// leaving nothing; once it is gone, it is. A look made in Go and the
// script's alike. A process made with env -i stands in for the exec.
func TestLeftoversNotBesideABlankProcess(t *testing.T) {
	for _, check := range []string{"", "off"} {
		t.Run("native check "+strconv.Quote(check), func(t *testing.T) {
			t.Setenv(local.CheckEnv, check)
			root := t.TempDir()
			t.Cleanup(func() { killAll(root) })
			ctx := context.Background()
			g := []string{"--root", root}
			pidFile := filepath.Join(t.TempDir(), "pid")
			code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", `env -i setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >`+pidFile)...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			id := strings.TrimSpace(out)
			if code, _, errs := bgjob(ctx, append(g, "wait", id)...); code != 0 {
				t.Fatalf("wait: exit %d: %s", code, errs)
			}
			b, err := os.ReadFile(pidFile)
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				t.Fatalf("the blank process's pid: %q %v %v", b, err, perr)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil || len(env) != 0 {
				t.Fatalf("the stand-in's environment: %q %v, want it read empty", env, err)
			}
			record := filepath.Join(root, jobdir.DefaultWorkspace, id, "leftovers")
			for range 3 {
				bgjob(ctx, append(g, "status", id)...)
			}
			if _, err := os.Stat(record); err == nil {
				t.Errorf("job %s recorded as leaving nothing while a process of its user whose environment reads empty lives", id)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			if !eventually(10*time.Second, func() bool {
				bgjob(ctx, append(g, "status", id)...)
				_, err := os.Stat(record)
				return err == nil
			}) {
				t.Errorf("job %s not recorded once the blank process was gone", id)
			}
		})
	}
}

// TestEndedAtRecorded: the look that records an ended job's leftovers
// records its end's time too, ended_at, from exit_code's mtime (the
// wrapper writes exit_code alone), so that a later script look (over SSH,
// in a container) starts no date for the job; made in Go or by the
// scripts, the same file.
func TestEndedAtRecorded(t *testing.T) {
	for _, check := range []string{"", "off"} {
		t.Run("check="+check, func(t *testing.T) {
			root := t.TempDir()
			t.Cleanup(func() { killAll(root) })
			t.Setenv(local.CheckEnv, check)
			ctx := context.Background()
			g := []string{"--root", root}
			code, out, errs := bgjob(ctx, append(g, "run", "-q", "--", "echo hi")...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			id := strings.TrimSpace(out)
			dir := filepath.Join(root, jobdir.DefaultWorkspace, id)
			if code, _, errs := bgjob(ctx, append(g, "wait", id)...); code != 0 {
				t.Fatalf("wait: exit %d: %s", code, errs)
			}
			if _, err := os.Stat(filepath.Join(dir, "leftovers")); err != nil {
				t.Fatalf("the wait that saw the job end did not record its leftovers: %v", err)
			}
			fi, err := os.Stat(filepath.Join(dir, "exit_code"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, jobdir.EndedFile))
			if err != nil {
				t.Fatalf("ended_at not recorded with the leftovers: %v", err)
			}
			if want := string(jobdir.EncodeEndedAt(fi.ModTime())); string(b) != want {
				t.Errorf("ended_at %q, want exit_code's mtime %q", b, want)
			}
			if fi, err := os.Stat(filepath.Join(dir, jobdir.EndedFile)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("ended_at's mode: %v %v, want 0600", fi.Mode(), err)
			}
			// The job's status tells the same end as before.
			code, out, errs = bgjob(ctx, append(g, "status", "--json", id)...)
			var j []jobdir.Job
			if code != 0 || json.Unmarshal([]byte(out), &j) != nil || len(j) != 1 {
				t.Fatalf("status: exit %d: %s %s", code, out, errs)
			}
			if !j[0].EndedAt.Equal(fi.ModTime().Truncate(time.Millisecond)) {
				t.Errorf("status: ended_at %v, want %v", j[0].EndedAt, fi.ModTime().Truncate(time.Millisecond))
			}
		})
	}
}
