package shellgen_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// printScript is the job's command, run as argv ["sh", "-c", printScript,
// "argv0", s1, s2]: it prints its arguments and $BGJOB_FUZZ, each followed
// by NUL, then its physical working directory.
const printScript = `printf '%s\0' "$@" "$BGJOB_FUZZ"; pwd -P`

// launchSeeds are the inputs of FuzzLaunchArgv's seed corpus: two argv
// words, an environment value and the name of the working directory.
var launchSeeds = []struct{ s1, s2, env, dir string }{
	{"", "", "", "d"},
	{"hello", "world", "value", "work"},
	{"it's", `"double"`, `\`, "'"},
	{"$HOME", "`id`", "$(id)", "$x"},
	{"\n", "line1\nline2\n", "trailing\n\n", "new\nline"},
	{"-n", "--", "-e", "-"},
	{"--help", "-rf", "-", "-rf dir"},
	{"*", "?", "[a-z]", "*"},
	{"~", "~root", "a=b", "~"},
	{"=", "A=B", "!", "!"},
	{"%s%d%%", `\0\n`, "%", "%s"},
	{" ", "\t", "\r\n", " "},
	{"if", "done", "then", "if"},
	{shellgen.EndMarker, "\n" + shellgen.EndMarker + "\n", shellgen.BeginMarker, shellgen.EndMarker},
	{"\xff\xfe", "\x80", "caf\u00e9", "\xff"},
	{"\u2028\u2029", "日本語", "\U0001F600", "日本"},
	{allBytes(), reverse(allBytes()), allBytes(), "a\x01\x7f\x1b[31m"},
	{"a\x00b", "", "", "d"},
	{"", "", "\x00", "d"},
	{"", "", "", "d\x00"},
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// dirName turns a fuzzed string into a valid name for a directory.
func dirName(s string) string {
	s = strings.ReplaceAll(s, "/", "_")
	if s == "" || s == "." || s == ".." {
		s = "d" + s
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// checkLaunch generates the launch script of an argv job that prints its
// arguments, environment and working directory, runs it with sh (nil:
// /bin/sh with the host's PATH), waits for the job to end and checks that
// every byte arrived in stdout.log.
func checkLaunch(t *testing.T, sh *shell, s1, s2, env, dir string) {
	name := dirName(dir)
	meta := jobdir.Meta{
		Version:   jobdir.Version,
		ID:        jobdir.NewID(time.Now()),
		Workspace: "w",
		Argv:      []string{"sh", "-c", printScript, "argv0", s1, s2},
		Cwd:       name,
		Env:       []string{"BGJOB_FUZZ"},
		StartedAt: time.Now().UTC().Truncate(time.Millisecond),
	}
	base := t.TempDir()
	l := shellgen.Launch{
		Target: shellgen.Target{Root: filepath.Join(base, "root"), Workspace: "w"},
		Meta:   meta,
		Env:    []string{"BGJOB_FUZZ=" + env},
	}

	if strings.Contains(s1+s2+env+name, "\x00") {
		for _, s := range []string{s1, s2, env, name} {
			if _, err := shellgen.Quote(s); strings.Contains(s, "\x00") != errors.Is(err, shellgen.ErrNUL) {
				t.Errorf("Quote(%q) = %v", s, err)
			}
		}
		if _, err := shellgen.QuoteArgv(meta.Argv); strings.Contains(s1+s2, "\x00") != errors.Is(err, shellgen.ErrNUL) {
			t.Errorf("QuoteArgv(%q) = %v", meta.Argv, err)
		}
		if script, err := shellgen.LaunchScript(l); !errors.Is(err, shellgen.ErrNUL) {
			t.Errorf("LaunchScript with a NUL byte = %v, want ErrNUL; script:\n%s", err, script)
		}
		return
	}
	if len(s1)+len(s2)+len(env)+len(name) > 4096 {
		// Quoting twice (the wrapper inside the launch script) can blow a
		// quote-heavy input up 13 times, past the kernel's limit on one
		// argument of sh -c.
		t.Skip("input too long for sh -c")
	}
	command, err := shellgen.QuoteArgv(l.Meta.Argv)
	if err != nil {
		t.Fatal(err)
	}
	l.Meta.Command = command
	script, err := shellgen.LaunchScript(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(script) > shellgen.MaxArg {
		// The argv is quoted three times (in meta.json's command, as the
		// wrapper's list, the wrapper in the launch script): a quote grows
		// 64 times.
		t.Skip("script too long for sh -c")
	}
	if err := os.Mkdir(filepath.Join(base, name), 0o755); err != nil {
		t.Fatal(err)
	}
	// A decoy the relative working directory must not resolve to.
	decoys := filepath.Join(base, "decoys")
	if err := os.MkdirAll(filepath.Join(decoys, name), 0o755); err != nil {
		t.Fatal(err)
	}

	run := func(script string) jobdir.Job {
		t.Helper()
		return runOne(t, sh, base, []string{"CDPATH=" + decoys}, script)
	}

	j := run(script)
	if j.Status != jobdir.StatusRunning && j.Status != jobdir.StatusExited {
		t.Fatalf("launched job is %s (%s)", j.Status, j.Error)
	}
	jobDir := filepath.Join(base, "root", "w", meta.ID)
	if j.Dir != jobDir {
		t.Errorf("launched job dir = %q, want %q", j.Dir, jobDir)
	}
	code := waitExitCode(t, jobDir)
	stderrLog, _ := os.ReadFile(filepath.Join(jobDir, "stderr.log"))
	// One write, the status and its newline.
	if code != "0\n" || len(stderrLog) > 0 {
		t.Errorf("exit_code = %q, stderr.log = %q; want 0 and empty", code, stderrLog)
	}
	// meta.json is byte for byte jobdir's encoding of the job's Meta and
	// the process fields the launcher learned.
	metaFile, err := os.ReadFile(filepath.Join(jobDir, jobdir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := jobdir.DecodeMeta(metaFile)
	if err != nil {
		t.Fatalf("meta.json %q: %v", metaFile, err)
	}
	wantMeta := l.Meta
	wantMeta.PID, wantMeta.PGID, wantMeta.ProcStart, wantMeta.BootID = onDisk.PID, onDisk.PGID, onDisk.ProcStart, onDisk.BootID
	// The host's fields: the caller's umask, and what --line-buffered did.
	wantMeta.Umask, wantMeta.Buffering, wantMeta.HostStartedAt = onDisk.Umask, onDisk.Buffering, onDisk.HostStartedAt
	if len(onDisk.Umask) != 4 {
		t.Errorf("meta.json records umask %q, want the caller's, e.g. 0022", onDisk.Umask)
	}
	if enc, err := jobdir.EncodeMeta(wantMeta); err != nil || string(enc) != string(metaFile) {
		t.Errorf("meta.json is not jobdir's encoding (%v):\n got %q\nwant %q", err, metaFile, enc)
	}

	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	want := s1 + "\x00" + s2 + "\x00" + env + "\x00" + realBase + "/" + name + "\n"
	got, err := os.ReadFile(filepath.Join(jobDir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(want, "\x00"), strings.Split(string(got), "\x00")); diff != "" {
		t.Errorf("stdout.log differs from argv, env and cwd (-want +got):\n%s", diff)
	}

	// The job's status, as the status script sees it once the job ended.
	status, err := shellgen.StatusScript(l.Target, []string{meta.ID})
	if err != nil {
		t.Fatal(err)
	}
	j = run(status)
	if j.Status != jobdir.StatusExited || j.ExitCode == nil || *j.ExitCode != 0 || j.Error != "" {
		t.Errorf("status after exit = %s, code %v, error %q; want exited 0", j.Status, j.ExitCode, j.Error)
	}
	if j.PID <= 1 || j.PGID != j.PID || j.ID != meta.ID || j.Workspace != "w" {
		t.Errorf("meta.json = %+v", j.Meta)
	}
	// (proc_start may be empty: a quick job can end before the launcher
	// reads it.) JSON carries valid UTF-8 only; other bytes become U+FFFD.
	if utf8.ValidString(s1+s2+name) && (!slices.Equal(j.Argv, meta.Argv) || j.Cwd != name || j.Command != command) {
		t.Errorf("meta.json argv, cwd, command = %q, %q, %q; want %q, %q, %q", j.Argv, j.Cwd, j.Command, meta.Argv, name, command)
	}
}

// runScript runs script with sh (nil: /bin/sh with the host's PATH, else
// with sh also first in PATH as "sh") in dir, with env added to the
// environment, and returns the jobs it reported; a reported error fails
// the test.
func runScript(t *testing.T, sh *shell, dir string, env []string, script string) []jobdir.Job {
	t.Helper()
	var cmd *exec.Cmd
	env = append(os.Environ(), env...)
	if sh == nil {
		cmd = exec.Command("/bin/sh", "-c", script)
	} else {
		cmd = sh.command(t, "-c", script)
		env = append(env, "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.Dir = dir
	cmd.Env = env
	return cmdJobs(t, cmd)
}

// cmdJobs runs cmd, a launch script's shell, and returns the jobs the
// script reported; a reported error fails the test.
func cmdJobs(t *testing.T, cmd *exec.Cmd) []jobdir.Job {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the script: %v\n%s", err, stderr.Bytes())
	}
	var jobs []jobdir.Job
	err = decodeEvents(bytes.NewReader(out), func(ev streamEvent) error {
		switch {
		case ev.Job != nil:
			jobs = append(jobs, jobdir.Derive(*ev.Job, "local"))
		case ev.Err != nil:
			return ev.Err
		default:
			return fmt.Errorf("unexpected event %+v", ev)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("script output: %v\n%s\nstderr:\n%s", err, out, stderr.Bytes())
	}
	return jobs
}

// runOne is runScript for a script that reports exactly one job.
func runOne(t *testing.T, sh *shell, dir string, env []string, script string) jobdir.Job {
	t.Helper()
	jobs := runScript(t, sh, dir, env, script)
	if len(jobs) != 1 {
		t.Fatalf("script reported %d jobs, want 1", len(jobs))
	}
	return jobs[0]
}

// waitExitCode waits for the job in dir to write exit_code and returns it.
// It fails at once when the wrapper has ended without writing it.
func waitExitCode(t *testing.T, dir string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		gone := wrapperGone(dir)
		b, err := os.ReadFile(filepath.Join(dir, "exit_code"))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
		if gone || time.Now().After(deadline) {
			files, _ := os.ReadDir(dir)
			stderr, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
			t.Fatalf("no exit_code (wrapper gone: %v): %v; files %v; stderr.log %q", gone, err, files, stderr)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wrapperGone reports whether the wrapper whose pid dir/meta.json records
// has ended (or become a zombie).
func wrapperGone(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return false
	}
	m, err := jobdir.DecodeMeta(b)
	if err != nil || m.PID <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.PID))
	if err != nil {
		return os.IsNotExist(err)
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// FuzzLaunchArgv runs the launch script of a job whose argv, environment
// and working directory are fuzzed, and checks that the job received them
// byte for byte.
func FuzzLaunchArgv(f *testing.F) {
	for _, s := range launchSeeds {
		f.Add(s.s1, s.s2, s.env, s.dir)
	}
	f.Fuzz(func(t *testing.T, s1, s2, env, dir string) {
		checkLaunch(t, nil, s1, s2, env, dir)
	})
}

// TestLaunchArgvShells runs the seeds of FuzzLaunchArgv with bash, dash and
// busybox sh both as the shell that runs the launch script and as the sh
// that runs job.sh and the job.
func TestLaunchArgvShells(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			for i, s := range launchSeeds {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					checkLaunch(t, &sh, s.s1, s.s2, s.env, s.dir)
				})
			}
		})
	}
}

// TestLaunchUmaskInPIDNamespace: a launch in a PID namespace that kept
// its parent's /proc records the caller's umask, not that of the process
// its pid names in that /proc (pid 1 there is the host's init).
func TestLaunchUmaskInPIDNamespace(t *testing.T) {
	// A umask other than init's, so that reading the wrong process shows.
	want := "0077"
	if b, err := os.ReadFile("/proc/1/status"); err == nil && strings.Contains(string(b), "\nUmask:\t0077\n") {
		want = "0027"
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			argv := append([]string{sh.path(t)}, sh.argv[1:]...)
			unshare, err := exec.LookPath("unshare")
			if err != nil {
				testneed.Missing(t, "unshare (util-linux): %v", err)
			}
			// Root makes a PID namespace; others need a user namespace too.
			ns := []string{"-pf"}
			if os.Getuid() != 0 {
				ns = []string{"-Urpf"}
			}
			if out, err := exec.Command(unshare, append(ns, "true")...).CombinedOutput(); err != nil {
				testneed.Missing(t, "a PID namespace (unshare %s): %v: %s", strings.Join(ns, " "), err, out)
			}
			root := filepath.Join(t.TempDir(), "root")
			m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Argv: []string{"true"}, Env: []string{}}
			m.Command, _ = shellgen.QuoteArgv(m.Argv)
			launch, err := shellgen.LaunchScript(shellgen.Launch{Target: shellgen.Target{Root: root, Workspace: "w"}, Meta: m})
			if err != nil {
				t.Fatal(err)
			}
			args := append(append(ns, argv...), "-c", "umask "+want+"\n"+launch)
			cmd := exec.Command(unshare, args...)
			cmd.Dir = t.TempDir()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("launch in a PID namespace: %v\n%s", err, out)
			}
			b, err := os.ReadFile(filepath.Join(root, "w", m.ID, jobdir.MetaFile))
			if err != nil {
				t.Fatal(err)
			}
			got, err := jobdir.DecodeMeta(b)
			if err != nil {
				t.Fatalf("meta.json %q: %v", b, err)
			}
			if got.Umask != want {
				t.Errorf("meta.json records umask %q, want the caller's %q", got.Umask, want)
			}
		})
	}
}
