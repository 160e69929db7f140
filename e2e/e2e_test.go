// Package e2e runs bgjob's command line end to end: the scripts in
// testdata/*.txtar read like shell sessions and run twice, once through the
// local runtime and once over SSH against a real OpenSSH sshd on 127.0.0.1.
// Jobs are real processes, stopped and killed with real signals.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/full"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestMain runs the tests, and the bgjob of their scripts, as bgjob-full:
// every verb and transport in the test binary (TestFullBinary runs the
// two binaries as installed).
func TestMain(m *testing.M) {
	cli.SetFull(full.New())
	testscript.Main(m, map[string]func(){
		"bgjob": func() { os.Exit(cli.Main()) },
	})
}

// TestLocal runs every script through the local runtime.
func TestLocal(t *testing.T) {
	t.Parallel()
	testscript.Run(t, params(t, nil))
}

// TestSSH runs every script with -H against a real sshd on 127.0.0.1. The
// "remote" host is this machine, so scripts can look at job files directly.
// An error line names the host, as a fan-out's does: $HOSTLABEL is
// "bgjob-test: " here, "" locally; a hint's command line carries it:
// $HOSTFLAG is "-H bgjob-test " here, "" locally.
func TestSSH(t *testing.T) {
	t.Parallel()
	cfg := sshConfig(t, sshtest.Start(t))
	testscript.Run(t, params(t, func(e *testscript.Env) {
		e.Setenv("BGJOB_HOST", "bgjob-test")
		e.Setenv("HOSTLABEL", "bgjob-test: ")
		e.Setenv("HOSTFLAG", "-H bgjob-test ")
		e.Setenv("BGJOB_SSH_CONFIG", cfg)
		e.Setenv("SSH_AUTH_SOCK", "")
	}))
}

// TestVia runs every script with -H through --via, by a command of each
// kind: one that joins its arguments into one line for a remote shell
// (ssh, the OpenSSH client against a real sshd on 127.0.0.1), and one that
// passes them on as they are (a stand-in for kubectl exec or podman exec
// that runs them on this machine after "--").
func TestVia(t *testing.T) {
	t.Parallel()
	execInto := writeExecInto(t)
	// The scripts of the transport (quoting, stdin, streams, signals,
	// follows, errors), through ssh, which joins its arguments into one
	// line, and through a command that passes them on (the whole suite
	// takes six minutes through ssh, two through the other: CI's time).
	transport := []string{"basics", "bad_input", "errors", "exit_status", "signals", "stop", "reading", "logs", "cursor_marks",
		"follow_reader", "follow_truncate", "wait_for", "run_ready", "events", "pty", "many_words", "all_bytes"}
	kinds := []struct {
		name, via string
		scripts   []string
	}{
		{"joined", "ssh -F " + sshConfig(t, sshtest.Start(t)) + " -o BatchMode=yes -o LogLevel=ERROR %h", transport},
		{"args", execInto + " %h --", transport},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			p := params(t, func(e *testscript.Env) {
				e.Setenv("BGJOB_HOST", "bgjob-test")
				e.Setenv("HOSTLABEL", "bgjob-test: ")
				e.Setenv("HOSTFLAG", "-H bgjob-test ")
				e.Setenv("BGJOB_VIA", k.via)
				e.Setenv("SSH_AUTH_SOCK", "")
			})
			p.Condition = conditions("via")
			if k.scripts != nil {
				p.Dir = ""
				for _, name := range k.scripts {
					p.Files = append(p.Files, filepath.Join("testdata", name+".txtar"))
				}
			}
			testscript.Run(t, p)
		})
	}
}

// writeExecInto writes a stand-in for a command such as kubectl exec or
// podman exec, which passes its arguments on as they are: "exec-into HOST
// -- COMMAND..." runs COMMAND on this machine. It returns its path.
func writeExecInto(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "exec-into")
	script := "#!/bin/sh\n# exec-into HOST -- COMMAND...: runs COMMAND here.\nshift\n[ \"$1\" = -- ] && shift\nexec \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func params(t *testing.T, setup func(*testscript.Env)) testscript.Params {
	return testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: false,
		Condition:           conditions(),
		Setup: func(e *testscript.Env) error {
			root := filepath.Join(e.WorkDir, "root")
			e.Setenv("BGJOB_ROOT", root)
			e.Setenv("BGJOB_HOST", "")
			e.Setenv("HOSTLABEL", "")
			e.Setenv("HOSTFLAG", "")
			e.Setenv("SHELL", "/bin/sh")
			// Under -race, every exiting bgjob would sleep a second.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			// Every status made in Go is checked against its script.
			e.Setenv(local.CheckEnv, "1")
			if setup != nil {
				setup(e)
			}
			e.Defer(func() { killAll(root) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exit":       cmdExit,
			"killgroup":  cmdKillGroup,
			"alive":      cmdAlive,
			"pidalive":   cmdPIDAlive,
			"waitfile":   cmdWaitFile,
			"jsonfield":  cmdJSONField,
			"spawn":      cmdSpawn,
			"groupsize":  cmdGroupSize,
			"fakejob":    cmdFakeJob,
			"jobenv":     cmdJobEnv,
			"newjobdir":  cmdNewJobDir,
			"allbytes":   cmdAllBytes,
			"runbytes":   cmdRunBytes,
			"cmpjob":     cmdCmpJob,
			"timeralive": cmdTimerAlive,
			"size":       cmdSize,
			"freeport":   cmdFreePort,
			"listening":  cmdListening,
			"tcpsend":    cmdTCPSend,
			"jobprocs":   cmdJobProcs,
			"killhelper": cmdKillHelper,
		},
	}
}

// conditions returns the scripts' conditions, those named true: [via],
// the script runs through --via (TestVia, TestNoProcVia), whose command
// is all bgjob knows of the host; [noproc], the host has no /proc
// (TestNoProcVia).
func conditions(set ...string) func(string) (bool, error) {
	return func(cond string) (bool, error) {
		switch cond {
		case "via", "noproc":
			return slices.Contains(set, cond), nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
}

// cmdExit runs a command and checks its exact exit status:
// exit N CMD [ARGS...].
func cmdExit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exit N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// findJob returns the meta.json of the newest job named name in the
// default workspace of the script's root.
func findJob(ts *testscript.TestScript, name string) jobdir.Meta {
	metas, _ := filepath.Glob(filepath.Join(ts.Getenv("BGJOB_ROOT"), "*", "*", "meta.json"))
	var best jobdir.Meta
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		m, err := jobdir.DecodeMeta(b)
		if err != nil {
			continue
		}
		if (m.Name == name || m.ID == name) && m.ID > best.ID {
			best = m
		}
	}
	if best.ID == "" {
		ts.Fatalf("no job named %s", name)
	}
	return best
}

func parseSignal(ts *testscript.TestScript, s string) syscall.Signal {
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "STOP": syscall.SIGSTOP}
	sig, ok := sigs[s]
	if !ok {
		ts.Fatalf("unknown signal %s", s)
	}
	return sig
}

// cmdKillGroup sends a signal to a job's whole process group, wrapper
// included, as someone other than bgjob would: killgroup SIG NAME.
func cmdKillGroup(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: killgroup SIG NAME")
	}
	m := findJob(ts, args[1])
	ts.Check(syscall.Kill(-m.PGID, parseSignal(ts, args[0])))
}

// cmdAlive checks whether a job's process group has live members:
// [!] alive NAME.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive NAME")
	}
	m := findJob(ts, args[0])
	n := groupMembers(m.PGID)
	if neg {
		// The wrapper exits just after it records the status: allow it that.
		eventually(2*time.Second, func() bool { n = groupMembers(m.PGID); return n == 0 })
	}
	if neg && n > 0 {
		out, _ := exec.Command("ps", "-o", "pid,ppid,pgid,stat,args", "-g", strconv.Itoa(m.PGID)).CombinedOutput()
		ts.Fatalf("job %s: %d processes of group %d still alive:\n%s", args[0], n, m.PGID, out)
	}
	if !neg && n == 0 {
		ts.Fatalf("job %s: no process of group %d is alive", args[0], m.PGID)
	}
}

// cmdPIDAlive checks whether the process whose pid is in FILE is alive:
// [!] pidalive FILE.
func cmdPIDAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: pidalive FILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	ts.Check(err)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	alive := err == nil && !strings.Contains(string(b), ") Z ")
	if alive == neg {
		ts.Fatalf("process %d alive: %v", pid, alive)
	}
}

// cmdWaitFile waits up to 10s for a file to exist and be non-empty:
// waitfile PATH.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	p := ts.MkAbs(args[0])
	if !eventually(10*time.Second, func() bool { fi, err := os.Stat(p); return err == nil && fi.Size() > 0 }) {
		ts.Fatalf("%s did not appear", p)
	}
}

// cmdJSONField checks one field of the JSON in stdout, an object or the
// first element of an array: jsonfield KEY VALUE, VALUE as JSON ("null",
// "143", "\"killed\"" or a bare string).
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonfield KEY VALUE")
	}
	out := ts.ReadFile("stdout")
	var v any
	ts.Check(json.Unmarshal([]byte(out), &v))
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			ts.Fatalf("empty JSON array")
		}
		v = arr[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		ts.Fatalf("stdout is not a JSON object")
	}
	got, present := obj[args[0]]
	if !present {
		ts.Fatalf("no field %q in %s", args[0], out)
	}
	gb, _ := json.Marshal(got)
	want := args[1]
	match := string(gb) == want || fmt.Sprint(got) == want
	if match == neg {
		ts.Fatalf("field %s = %s, want %s%s", args[0], gb, map[bool]string{true: "not "}[neg], want)
	}
}

// groupMembers counts the live (non-zombie) processes of group pgid.
func groupMembers(pgid int) int {
	n := 0
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}

// killAll kills the process group of every job under root, the processes
// that left it carrying its id, and bgjob's helpers that carry a job
// directory under root (a PTY job's script), so that no test leaves
// processes behind.
// groupIsJobs reports whether m's process group can still be the job's
// (bg_tied's rule): a job long ended gave up its pid, and a process that
// got it and leads a group of its own (another test's wrapper) is not the
// job's.
func groupIsJobs(m jobdir.Meta) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.PGID))
	if err != nil {
		return true // no such process: the group, if any, is the job's
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 20 {
		return false
	}
	return f[2] != strconv.Itoa(m.PGID) || f[19] == m.ProcStart
}

func killAll(root string) {
	metas, _ := filepath.Glob(filepath.Join(root, "*", "*", "meta.json"))
	ids := map[string]bool{}
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if m, err := jobdir.DecodeMeta(b); err == nil && m.PGID > 1 {
			if groupIsJobs(m) {
				syscall.Kill(-m.PGID, syscall.SIGKILL)
			}
			ids[m.ID] = true
		}
	}
	// The processes that left their job's group carry its id.
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			id, ok := strings.CutPrefix(kv, "BGJOB_JOB_ID=")
			dir, inRoot := strings.CutPrefix(kv, "BGJOB_JOB_DIR=")
			if ok && ids[id] || inRoot && strings.HasPrefix(dir, root+"/") {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
}
