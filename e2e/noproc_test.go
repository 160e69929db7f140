package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"

	"github.com/bgjob/bgjob/internal/testneed"
)

// noProcShim writes, in a new directory, a ps that works where /proc is
// hidden (ps itself reads /proc on Linux: this one runs the real ps in a
// mount namespace of its own with the tmpfs over /proc unmounted, as ps
// works without /proc elsewhere) and hide, which runs its arguments in a
// mount namespace where /proc is an empty tmpfs, with that ps first on
// PATH. It returns the directory. It skips the test unless it runs as
// root with unshare, mount and ps.
func noProcShim(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		testneed.Missing(t, "root, to hide /proc in a mount namespace")
	}
	for _, tool := range []string{"unshare", "mount", "umount", "ps"} {
		if _, err := exec.LookPath(tool); err != nil {
			testneed.Missing(t, "%s", tool)
		}
	}
	ps, _ := exec.LookPath("ps")
	dir := t.TempDir()
	files := map[string]string{
		"ps": "#!/bin/sh\nexec unshare -m sh -c 'umount /proc && exec " + ps + " \"$@\"' ps \"$@\"\n",
		"hide": "#!/bin/sh\nexec unshare -m sh -c 'mount -t tmpfs -o size=64k noproc /proc && [ ! -e /proc/self/stat ] || " +
			"{ echo \"/proc is not hidden\" >&2; exit 99; }; PATH=" + dir + ":$PATH exec \"$@\"' sh \"$@\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// noProcTargets returns ways to run bgjob against a host without /proc:
// locally, bgjob itself runs in the hidden namespace; over SSH, the test
// sshd runs each session's command there (ForceCommand), while bgjob runs
// here.
func noProcTargets(t *testing.T) []struct {
	name string
	bg   func(args ...string) (int, string, string)
} {
	t.Helper()
	dir := noProcShim(t)
	hide := filepath.Join(dir, "hide")
	bin := bgjobBinary(t)
	localRoot := t.TempDir()
	t.Cleanup(func() { killAll(localRoot) })
	local := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(hide, append([]string{bin, "--root", localRoot}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code == 99 || err != nil && code < 0 {
			t.Fatalf("bgjob %v without /proc: %v: %s", args, err, errb.String())
		}
		return code, out.String(), errb.String()
	}
	srv := sshtest.Start(t, "ForceCommand "+hide+` sh -c "$SSH_ORIGINAL_COMMAND"`)
	cfg := sshConfig(t, srv)
	sshRoot := t.TempDir()
	t.Cleanup(func() { killAll(sshRoot) })
	t.Setenv("SSH_AUTH_SOCK", "")
	overSSH := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, errs := bgjob(context.Background(), append([]string{"--root", sshRoot, "--ssh-config", cfg, "-H", "bgjob-test"}, args...)...)
		if strings.Contains(errs, "/proc is not hidden") {
			t.Fatalf("bgjob %v over SSH: %s", args, errs)
		}
		return code, out, errs
	}
	return []struct {
		name string
		bg   func(args ...string) (int, string, string)
	}{{"local", local}, {"ssh", overSSH}}
}

// TestNoProc: on a host without /proc, status, ls, stop, prune and the
// timeout find a job's processes through ps, by its process group, tell
// the truth about them, and say which method applied: "process_scan":
// "ps" in --json, "its process group only: no /proc" in text. (A process
// that left the group is not found there: the environment scan needs
// /proc.)
func TestNoProc(t *testing.T) {
	for _, tc := range noProcTargets(t) {
		t.Run(tc.name, func(t *testing.T) { testNoProc(t, tc.bg) })
	}
}

func testNoProc(t *testing.T, bg func(args ...string) (int, string, string)) {
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := bg(args...)
		if code != 0 {
			t.Fatalf("bgjob %v: exit %d: %s", args, code, errs)
		}
		return out
	}
	job := func(ref string) jobdir.Job {
		t.Helper()
		var jobs []jobdir.Job
		out := must("status", "--json", ref)
		if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
			t.Fatalf("status %s: %v: %q", ref, err, out)
		}
		return jobs[0]
	}

	// A running job: running, with its group's members counted (seen from
	// outside, with the real /proc) and the method said.
	must("run", "-q", "-n", "grp", "--", `trap "" TERM; sleep 300 & sleep 301`)
	var j jobdir.Job
	if !eventually(5*time.Second, func() bool { j = job("grp"); return j.LiveProcesses == groupMembers(j.PGID)-1 && j.LiveProcesses >= 2 }) {
		t.Fatalf("grp: %s with %d live processes, the group has %d besides the wrapper", j.Status, j.LiveProcesses, groupMembers(j.PGID)-1)
	}
	if j.Status != jobdir.StatusRunning || j.ProcessScan != "ps" {
		t.Fatalf("grp: status %s, process_scan %q; want running, ps", j.Status, j.ProcessScan)
	}
	if out := must("status", "grp"); !strings.Contains(out, "live_processes: "+strconv.Itoa(j.LiveProcesses)+" (its process group only: no /proc)") {
		t.Errorf("status text does not say how the processes were found:\n%s", out)
	}
	if out := must("ls", "--json"); !strings.Contains(out, `"process_scan":"ps"`) {
		t.Errorf("ls --json does not say process_scan ps: %s", out)
	}

	// A job that ended leaving a child in its group: exited 0, one process
	// still running, kept by prune (which says how it counted).
	must("run", "-q", "-n", "left", "--", "sleep 302 & exit 0")
	bg("wait", "left")
	if j := job("left"); j.Status != jobdir.StatusExited || derefCode(j.ExitCode) != 0 || j.LiveProcesses != 1 || groupMembers(j.PGID) != 1 {
		t.Fatalf("left: %s exit %d, %d live processes (the group has %d); want exited 0 with 1", j.Status, derefCode(j.ExitCode), j.LiveProcesses, groupMembers(j.PGID))
	}
	if out := must("status", "left"); !strings.Contains(out, "exited (1 process still running, its process group only (no /proc))") {
		t.Errorf("status text of left:\n%s", out)
	}
	code, out, errs := bg("prune", "--all", "--dry-run", "--json")
	if code != 0 || !strings.Contains(out, `"name":"left","status":"exited","reason":"live_processes","live_processes":1,"process_scan":"ps"`) {
		t.Errorf("prune --dry-run --json: exit %d: %s %s", code, out, errs)
	}

	// stop: the TERM-ignoring job is KILLed after the grace, the child of
	// the ended one is killed and its status kept; nothing is left.
	grp, left := job("grp"), job("left")
	start := time.Now()
	must("stop", "--grace", "300ms", "grp", "left")
	// A bound on a hang, with room for a loaded machine (5 s failed under
	// load average 40: each look here is a ps).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("stop took %s", d)
	}
	if j := job("grp"); j.Status != jobdir.StatusKilled || derefCode(j.ExitCode) != 137 || j.LiveProcesses != 0 {
		t.Errorf("grp after stop: %s exit %d, %d live; want killed 137, 0", j.Status, derefCode(j.ExitCode), j.LiveProcesses)
	}
	if j := job("left"); j.Status != jobdir.StatusExited || derefCode(j.ExitCode) != 0 || j.LiveProcesses != 0 {
		t.Errorf("left after stop: %s exit %d, %d live; want exited 0, 0", j.Status, derefCode(j.ExitCode), j.LiveProcesses)
	}
	for _, j := range []jobdir.Job{grp, left} {
		if n := groupMembers(j.PGID); n != 0 {
			t.Errorf("job %s: %d processes of its group alive after stop", j.Name, n)
		}
	}

	// The timeout: TERM ignored, KILL after the grace.
	must("run", "-q", "-n", "slow", "--timeout", "1s", "--grace", "300ms", "--", `trap "" TERM; sleep 303`)
	bg("wait", "--timeout", "20s", "slow")
	if j := job("slow"); j.Status != jobdir.StatusKilled || j.Reason != "timeout" || derefCode(j.ExitCode) != 137 || groupMembers(j.PGID) != 0 {
		t.Errorf("slow: %s (%s) exit %d, group %d; want killed (timeout) 137, none", j.Status, j.Reason, derefCode(j.ExitCode), groupMembers(j.PGID))
	}
}
