package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
)

// Custom testscript commands for the lifecycle-hardening scripts
// (identity, bad input, symlinks, exact bytes). They are registered in
// params' Cmds map.

// cmdSpawn starts an unrelated program in a session and process group of
// its own: a shell (the group leader) with two `sleep 60` children, as a
// process that got a recycled pid could be. It writes the leader's pid to
// FILE and kills the group when the script ends: spawn FILE. With a
// second argument the leader is, in the end, `tail -f VIEWED`: a user's
// viewer of a file, started from a shell with job control: spawn FILE
// VIEWED.
func cmdSpawn(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 || neg {
		ts.Fatalf("usage: spawn FILE [VIEWED]")
	}
	cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	if len(args) == 2 {
		cmd = exec.Command("sh", "-c", `sleep 60 & sleep 60 & exec tail -f "$1"`, "sh", ts.MkAbs(args[1]))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	ts.Check(cmd.Start())
	pid := cmd.Process.Pid
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ts.Defer(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	})
	if !eventually(5*time.Second, func() bool { return groupMembers(pid) >= 3 }) {
		ts.Fatalf("spawned group %d did not start its children", pid)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strconv.Itoa(pid)+"\n"), 0o644))
}

// cmdGroupSize checks that the process group led by the pid in FILE has
// exactly N live members: groupsize FILE N.
func cmdGroupSize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: groupsize FILE N")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	ts.Check(err)
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	if got := groupMembers(pid); got != want {
		ts.Fatalf("group %d has %d live members, want %d", pid, got, want)
	}
}

// makeJob fabricates a job directory with jobdirtest in the workspace of
// the script's root (BGJOB_WORKSPACE or default), creating the root 0700 if
// needed.
func makeJob(ts *testscript.TestScript, j jobdirtest.Job) (jobdir.Meta, string) {
	ws := ts.Getenv("BGJOB_WORKSPACE")
	if ws == "" {
		ws = jobdir.DefaultWorkspace
	}
	mk, err := jobdirtest.NewMaker(ts.Getenv("BGJOB_ROOT"))
	ts.Check(err)
	m, dir, err := mk.Make(ws, j)
	ts.Check(err)
	return m, dir
}

// cmdFakeJob fabricates a job directory, as the launcher would leave it,
// for a job named NAME whose wrapper pid is the one in PIDFILE, with no
// exit_code. START says whether meta.json records that process's real
// start time ("same") or another one ("other"); BOOT whether it records
// this host's boot id ("same") or another ("other"): fakejob NAME PIDFILE
// same|other same|other.
func cmdFakeJob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 || neg {
		ts.Fatalf("usage: fakejob NAME PIDFILE same|other same|other")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[1])))
	ts.Check(err)
	j := jobdirtest.Job{
		Meta:   jobdir.Meta{Name: args[0], Command: "sleep 60", PID: pid},
		Script: "# fabricated by the e2e test\n",
	}
	switch args[2] + " " + args[3] {
	case "same same":
		j.State = jobdirtest.Running
	case "other same":
		j.State = jobdirtest.Vanished // another start time
	case "same other":
		j.State = jobdirtest.Rebooted // the real start time, another boot
	case "other other":
		j.State = jobdirtest.Rebooted
		start, err := jobdirtest.ProcStart(pid)
		ts.Check(err)
		n, err := strconv.ParseUint(start, 10, 64)
		ts.Check(err)
		j.Meta.ProcStart = strconv.FormatUint(n+12345, 10)
	default:
		ts.Fatalf("START and BOOT must each be same or other")
	}
	makeJob(ts, j)
}

// cmdJobEnv sets VAR to the directory of the newest job named NAME, VAR_ID
// to its id and VAR_PID to its wrapper's pid: jobenv NAME VAR.
func cmdJobEnv(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: jobenv NAME VAR")
	}
	m := findJob(ts, args[0])
	metas, _ := filepath.Glob(filepath.Join(ts.Getenv("BGJOB_ROOT"), "*", m.ID, jobdir.MetaFile))
	if len(metas) != 1 {
		ts.Fatalf("job %s: %d directories", m.ID, len(metas))
	}
	ts.Setenv(args[1], filepath.Dir(metas[0]))
	ts.Setenv(args[1]+"_ID", m.ID)
	ts.Setenv(args[1]+"_PID", strconv.Itoa(m.PID))
}

// cmdNewJobDir creates an empty job directory with a fresh id, as the
// launcher has just made it, sets VAR to its path and VAR_ID to the id:
// newjobdir VAR.
func cmdNewJobDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: newjobdir VAR")
	}
	m, dir := makeJob(ts, jobdirtest.Job{State: jobdirtest.Creating})
	ts.Setenv(args[0], dir)
	ts.Setenv(args[0]+"_ID", m.ID)
}

// allBytes is every byte value but NUL, in order.
func allBytes() string {
	b := make([]byte, 0, 255)
	for i := 1; i < 256; i++ {
		b = append(b, byte(i))
	}
	return string(b)
}

// cmdAllBytes writes every byte value 1-255 to FILE: allbytes FILE.
func cmdAllBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: allbytes FILE")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(allBytes()), 0o644))
}

// cmdRunBytes starts a job named NAME that prints every byte value 1-255
// with printf '%s', passing the bytes as one argv word (argv), inside a
// script string with its single quotes escaped (script) or as the value of
// an --env variable (env), with any further run flags. No shell stands
// between the test and bgjob: runbytes NAME argv|script|env [FLAGS...].
func cmdRunBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: runbytes NAME argv|script|env [FLAGS...]")
	}
	var cmd []string
	switch args[1] {
	case "argv":
		cmd = []string{"printf", "%s", allBytes()}
	case "script":
		cmd = []string{"printf '%s' '" + strings.ReplaceAll(allBytes(), "'", `'\''`) + "'"}
	case "env":
		args = append(args, "-e", "BYTES="+allBytes())
		cmd = []string{`printf '%s' "$BYTES"`}
	default:
		ts.Fatalf("usage: runbytes NAME argv|script|env [FLAGS...]")
	}
	run := append([]string{"run", "-q", "-n", args[0]}, args[2:]...)
	ts.Check(ts.Exec("bgjob", append(append(run, "--"), cmd...)...))
}

// cmdCmpJob compares a file of the newest job named NAME with WANT, byte
// for byte: cmpjob NAME FILE WANT.
func cmdCmpJob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: cmpjob NAME FILE WANT")
	}
	m := findJob(ts, args[0])
	got, err := os.ReadFile(filepath.Join(ts.Getenv("BGJOB_ROOT"), m.Workspace, m.ID, args[1]))
	ts.Check(err)
	want := ts.ReadFile(args[2])
	if string(got) != want {
		ts.Fatalf("job %s: %s differs from %s:\ngot  %q\nwant %q", args[0], args[1], args[2], got, want)
	}
}

// cmdTimerAlive checks whether the --timeout timer of a job runs:
// [!] timeralive NAME. The negation allows the timer the second it takes
// to notice that its job is gone.
func cmdTimerAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: timeralive NAME")
	}
	script := filepath.Join(ts.Getenv("BGJOB_ROOT"), "default", findJob(ts, args[0]).ID, "job.sh")
	alive := func() bool {
		for _, args := range processArgs() {
			if slices.Contains(args, script) && slices.Contains(args, "timer") {
				return true
			}
		}
		return false
	}
	if neg {
		if !eventually(5*time.Second, func() bool { return !alive() }) {
			ts.Fatalf("the timer of job %s still runs", args[0])
		}
		return
	}
	if !alive() {
		ts.Fatalf("the timer of job %s does not run", args[0])
	}
}

// cmdSize checks the size in bytes of a file (stdout, stderr or a path):
// size FILE MIN MAX.
func cmdSize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: size FILE MIN MAX")
	}
	lo, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	hi, err := strconv.ParseInt(args[2], 10, 64)
	ts.Check(err)
	n := int64(len(ts.ReadFile(args[0])))
	if n < lo || n > hi {
		ts.Fatalf("%s is %d bytes, want %d to %d", args[0], n, lo, hi)
	}
}

// cmdJobProcs checks how many live processes carry the directory of the
// newest job named NAME in their environment (BGJOB_JOB_DIR: the command
// and bgjob's own helpers, the wrapper aside): jobprocs NAME N.
func cmdJobProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: jobprocs NAME N")
	}
	m := findJob(ts, args[0])
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	root := ts.Getenv("BGJOB_ROOT")
	got := 0
	for dir, pids := range jobProcesses(root) {
		if filepath.Base(dir) == m.ID {
			got += len(pids)
		}
	}
	if got != want {
		ts.Fatalf("job %s: %d processes carry its directory, want %d", args[0], got, want)
	}
}

// cmdKillHelper sends SIGNAL to the process named COMM (its /proc comm)
// that carries the directory of the newest job named NAME: killhelper
// NAME COMM SIGNAL, e.g. a PTY job's script.
func cmdKillHelper(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: killhelper NAME COMM SIGNAL")
	}
	m := findJob(ts, args[0])
	sig := parseSignal(ts, args[2])
	for dir, pids := range jobProcesses(ts.Getenv("BGJOB_ROOT")) {
		if filepath.Base(dir) != m.ID {
			continue
		}
		for _, pid := range pids {
			comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
			if err == nil && strings.TrimSpace(string(comm)) == args[1] {
				ts.Check(syscall.Kill(pid, sig))
				return
			}
		}
	}
	ts.Fatalf("job %s: no process %s", args[0], args[1])
}
