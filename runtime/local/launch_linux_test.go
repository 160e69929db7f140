package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
	"github.com/bgjob/bgjob/shellgen"
)

// TestNativeLaunchIsTheScripts: a launch made in Go (nativeLaunch) leaves
// what launch.sh leaves: each case is launched once in Go and once by
// the script (BGJOB_NATIVE_CHECK=off), under roots of their own, with
// the same id, and the two trees (file names, modes, contents, meta.json
// field by field), the job Run returns and the job once ended must be the
// same, but for the root, times, pids and process start times. The
// commands print their umask, environment and signal dispositions, so
// the wrapper is shown to start as the script starts it; a umask of
// 0277 shows the files private however the caller's umask would make
// them.
func TestNativeLaunchIsTheScripts(t *testing.T) {
	cwd := filepath.Join(t.TempDir(), "a\tc d")
	mkdir(t, cwd, 0o755)
	write(t, filepath.Join(cwd, "f"), "")
	gate := filepath.Join(t.TempDir(), "gate")
	long := "echo long; : " + strings.Repeat("x", shellgen.MaxArg) + "\n"
	show := "umask; grep -E '^Sig(Ign|Blk)' /proc/self/status; env | grep -v ^BGJOB_NATIVE_CHECK= | LC_ALL=C sort"
	tests := []struct {
		name      string
		root      string // under the case's directory
		workspace string
		umask     int
		spec      bgjob.Spec
		prep      func(t *testing.T, root string) // before both launches
		native    bool                            // made in Go
		gated     bool                            // the job waits for the gate: its tree is looked at while it runs
	}{
		{name: "plain", root: "r", spec: bgjob.Spec{Argv: []string{show}}, native: true},
		{name: "running", root: "r", spec: bgjob.Spec{Argv: []string{"while [ ! -e " + gate + " ]; do sleep 0.02; done; echo done"}}, native: true, gated: true},
		{name: "argv", root: "r", spec: bgjob.Spec{Argv: []string{"printf", "[%s]\n", "a b", "'q'", `\back\`, "tab\there", "nl\nx", "$HOME", "*", ""}}, native: true},
		{name: "command file", root: "r", spec: bgjob.Spec{Argv: []string{long}}, native: true},
		{name: "env", root: "r", spec: bgjob.Spec{Argv: []string{show}, Env: []string{"A=1", "B=two words", "C=$x\\\n"}}, native: true},
		{name: "cwd", root: "r", spec: bgjob.Spec{Argv: []string{"pwd; ls"}, Cwd: cwd}, native: true},
		{name: "missing cwd", root: "r", spec: bgjob.Spec{Argv: []string{"true"}, Cwd: "/nonexistent/dir"}, native: true},
		{name: "new root deep", root: "a/b\tc/r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true},
		{name: "umask 0277", root: "a/r", umask: 0o277, spec: bgjob.Spec{Argv: []string{show}, Timeout: time.Minute, Merge: true, LineBuffered: true}, native: true},
		{name: "existing workspace", root: "r", spec: bgjob.Spec{Argv: []string{"echo again"}}, native: true,
			prep: func(t *testing.T, root string) { launchScript(t, root, "default") }},
		{name: "new workspace", root: "r", workspace: "other", spec: bgjob.Spec{Argv: []string{"echo other"}}, native: true,
			prep: func(t *testing.T, root string) { launchScript(t, root, "default") }},
		{name: "root writable by others", root: "r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) { mkdir(t, root, 0o770) }},
		{name: "root under a file", root: "f/r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, filepath.Dir(filepath.Dir(root)), 0o700)
				if err := os.WriteFile(filepath.Dir(root), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		// mkdir's reason, where the permission bits say nothing (as root).
		{name: "root in /proc", root: "p/r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, filepath.Dir(filepath.Dir(root)), 0o700)
				if err := os.Symlink("/proc", filepath.Dir(root)); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "root a link", root: "r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, root+".real", 0o700)
				if err := os.Symlink(root+".real", root); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "workspace a link", root: "r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, root, 0o700)
				if err := os.Symlink(root, root+"/default"); err != nil {
					t.Fatal(err)
				}
			}},
		// mkdir -p's reason for a workspace that is a file: it exists.
		{name: "workspace a file", root: "r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, root, 0o700)
				if err := os.WriteFile(root+"/default", nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		// A root where .bgjob-root cannot be made (immutable, read-only,
		// full) is used all the same, and checked again next time.
		{name: "marker not made", root: "r", spec: bgjob.Spec{Argv: []string{"true"}}, native: true,
			prep: func(t *testing.T, root string) {
				mkdir(t, root+"/default", 0o700)
				// A link to nowhere: not the owner's file, and no file can
				// be made through it.
				if err := os.Symlink(root+"/nowhere/x", root+"/.bgjob-root"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "job dir exists", root: "r", spec: bgjob.Spec{Argv: []string{"true"}, ID: "20261204T000000-exists"}, native: true,
			prep: func(t *testing.T, root string) { mkdir(t, root+"/default/20261204T000000-exists", 0o700) }},
		// The script's: named.
		{name: "named", root: "r", spec: bgjob.Spec{Argv: []string{"true"}, Name: "n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			id := tt.spec.ID
			if id == "" {
				id = jobdir.NewID(time.Now())
			}
			var got [2]launched
			for i, check := range []string{"", "off"} {
				dir := filepath.Join(top, []string{"native", "script"}[i])
				root := filepath.Join(dir, tt.root)
				if tt.prep != nil {
					tt.prep(t, root)
				}
				t.Setenv(CheckEnv, check)
				spec := tt.spec
				spec.ID = id
				os.Remove(gate)
				var running map[string]string
				got[i] = launch(t, root, tt.workspace, tt.umask, spec, func() {
					if tt.gated {
						running = treeOf(t, dir)
						write(t, gate, "")
					}
				})
				got[i].tree, got[i].running = treeOf(t, dir), running
				got[i].normalize(dir)
			}
			if got[0].native != tt.native || got[1].native {
				t.Errorf("made in Go: %v and %v, want %v and false", got[0].native, got[1].native, tt.native)
			}
			got[0].native, got[1].native = false, false
			if diff := cmp.Diff(got[1], got[0], cmp.AllowUnexported(launched{})); diff != "" {
				t.Errorf("made in Go (+) differs from the script's (-):\n%s", diff)
			}
		})
	}
}

// launched is what a launch left: its error or the job Run returned, the
// job once ended, and the tree of its directory, as JSON and text.
type launched struct {
	err, run, ended string
	native          bool
	tree, running   map[string]string
}

// launchVolatile matches what differs from launch to launch in a job's
// JSON: times, pids, process start times.
var launchVolatile = regexp.MustCompile(`"(started_at|host_started_at|ended_at|pid|pgid|proc_start)":("[^"]*"|[0-9]+)`)

// launchEndedByRun is the part of a job's JSON that says it has ended.
var launchEndedByRun = regexp.MustCompile(`"status":"exited","exit_code":[0-9]+,"ended_at":[^,]*`)

func (l *launched) normalize(dir string) {
	n := func(s string) string {
		s = strings.ReplaceAll(s, dir, "DIR")
		s = strings.ReplaceAll(s, escRecord(dir), "DIR")
		s = strings.ReplaceAll(s, jsonString(dir), "DIR")
		return launchVolatile.ReplaceAllString(s, `"$1":X`)
	}
	l.err, l.run, l.ended = n(l.err), n(l.run), n(l.ended)
	// A command that ends at once may have ended by the look that ends
	// Run, made in Go or by the script: the job is "running" or "exited"
	// by the time each looked (l.ended holds how it ended).
	l.run = launchEndedByRun.ReplaceAllString(l.run, `"status":"running","exit_code":null,"ended_at":null`)
	for _, tree := range []map[string]string{l.tree, l.running} {
		for k, v := range tree {
			delete(tree, k)
			// The look that waits for the job's end records it without
			// processes, and with it the end's time (ended_at), unless a
			// process of the user was in the middle of an exec then (the
			// blank rule, docs/design/stopping.md): other tests'
			// processes decide that, not the launch.
			if strings.HasSuffix(k, "/leftovers") || strings.HasSuffix(k, "/ended_at") {
				continue
			}
			tree[n(k)] = n(v)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// launch runs spec under root and workspace with the process's umask
// set to umask (when not 0) for the launch, calls started, and waits for
// the job to end.
func launch(t *testing.T, root, workspace string, umask int, spec bgjob.Spec, started func()) launched {
	t.Helper()
	rt := &countingRuntime{Runtime: New()}
	c, err := newClientOf(rt, root, workspace)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var l launched
	if umask != 0 {
		old := syscall.Umask(umask)
		defer syscall.Umask(old)
	}
	j, err := c.Run(ctx, spec)
	l.native = rt.n.Load() == 0
	if err != nil {
		l.err = err.Error()
		return l
	}
	l.run = jsonOf(t, j)
	started()
	ended, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l.ended = jsonOf(t, ended[0])
	return l
}

// countingRuntime counts the scripts it runs.
type countingRuntime struct {
	*Runtime
	n atomic.Int32
}

func (r *countingRuntime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	r.n.Add(1)
	return r.Runtime.Exec(ctx, script, stdin, stdout)
}

// TestNativeLaunchReapsTheWrapper: a wrapper started in Go is this
// process's child, in a session of its own, and once its job has ended
// it is reaped, not left a zombie of a long-lived caller (bgjob mcp).
func TestNativeLaunchReapsTheWrapper(t *testing.T) {
	c, err := newClient(t, filepath.Join(t.TempDir(), "r"), "")
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"while [ ! -e " + gate + " ]; do sleep 0.05; done"}})
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "/" + j.ID + "/job.sh"
	kids := wrappersOf(wrapper)
	write(t, gate, "")
	if len(kids) != 1 || kids[0] != fmt.Sprint(j.PID) {
		t.Fatalf("the wrapper, pid %d, is not this process's child: children running it %v", j.PID, kids)
	}
	if sid, _ := unix.Getsid(j.PID); sid != j.PID {
		t.Errorf("the wrapper's session is %d, want its own, %d", sid, j.PID)
	}
	if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// A zombie's command line is empty: it is looked for by its pid.
	if !settled(func() bool { return !isChild(j.PID) }) {
		t.Fatalf("the wrapper %d is still this process's child (a zombie) after its job ended", j.PID)
	}
}

// isChild says whether pid is this process's child, alive or a zombie.
func isChild(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 1 && f[1] == fmt.Sprint(os.Getpid())
}

// wrappersOf returns the pids of this process's children, alive or not
// reaped yet, whose command line names wrapper.
func wrappersOf(wrapper string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != fmt.Sprint(os.Getpid()) {
			continue
		}
		if cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(cl), wrapper) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func jsonOf(t *testing.T, j jobdir.Job) string {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// treeOf returns each file and directory under dir: its mode, and a
// regular file's contents.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		tree[strings.TrimPrefix(p, dir)] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func mkdir(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// launchScript launches a job that ends at once by launch.sh, and waits
// for its end.
func launchScript(t *testing.T, root, workspace string) {
	t.Helper()
	t.Setenv(CheckEnv, "off")
	l := launch(t, root, workspace, 0, bgjob.Spec{Argv: []string{"true"}, ID: "20261204T000000-before"}, func() {})
	if l.err != "" {
		t.Fatal(l.err)
	}
}

// TestStartWrapperGate: a wrapper started in Go says it is ready (its
// signals trapped, its logs made) before meta.json is written for it,
// and goes on only once it is; where the launcher cannot write it, or is
// gone before the wrapper is ready, the wrapper writes meta.json itself
// and the job runs: a launch never leaves a job without meta.json.
func TestStartWrapperGate(t *testing.T) {
	umask, ok := procUmask()
	if !ok {
		t.Fatal("no umask in /proc/self/status")
	}
	boot, _ := firstLine("/proc/sys/kernel/random/boot_id")
	tests := []struct {
		name   string
		write  bool // the launcher writes meta.json
		cancel bool // the launch's ctx has ended before the wrapper is ready
	}{
		{name: "written by the launcher", write: true},
		{name: "written by the wrapper", write: false},
		{name: "launcher gone", cancel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), jobdir.NewID(time.Now()))
			host := gatedJob(t, dir, jobdir.Meta{Command: "echo ran"}, true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			var asked int
			var seen map[string]bool
			report, err := startWrapper(ctx, dir, umask, func(pid int) (string, bool) {
				asked = pid
				// What the wrapper has made by the time it is ready.
				seen = map[string]bool{}
				for _, f := range []string{"meta.json", "meta.json.tmp", "stdout.log", "stderr.log"} {
					_, err := os.Stat(dir + "/" + f)
					seen[f] = err == nil
				}
				if !tt.write {
					return "", false
				}
				return host.write(dir, pid, 0o022)
			})
			if tt.cancel {
				if !errors.Is(err, context.Canceled) || asked != 0 {
					t.Fatalf("startWrapper with its ctx ended = %q, %v, meta asked for pid %d; want context.Canceled, not asked", report, err, asked)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]bool{"meta.json": false, "meta.json.tmp": false, "stdout.log": true, "stderr.log": true}
				if !cmp.Equal(seen, want) {
					t.Errorf("files there when the wrapper was ready: %v, want the logs and no meta.json", seen)
				}
			}
			// The job runs to its end and has meta.json, its wrapper's.
			if !settled(func() bool { _, err := os.Stat(dir + "/exit_code"); return err == nil }) {
				t.Fatalf("the job did not end: %v", treeOf(t, dir))
			}
			b, err := os.ReadFile(dir + "/meta.json")
			if err != nil {
				t.Fatal(err)
			}
			if out, _ := os.ReadFile(dir + "/stdout.log"); string(out) != "ran\n" {
				t.Errorf("stdout.log = %q, want the command's output", out)
			}
			got, err := jobdir.DecodeMeta(b)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.cancel {
				if report+"\n" != string(b) {
					t.Errorf("reported %q, meta.json holds %q", report, b)
				}
				if got.PID != asked {
					t.Errorf("meta.json's pid is %d, meta was asked for %d", got.PID, asked)
				}
			}
			if got.PGID != got.PID || got.ProcStart == "" || got.Umask != umask || got.BootID != boot || got.Buffering == "" || got.HostStartedAt == nil {
				t.Errorf("meta.json's host fields: %s", b)
			}
		})
	}
}

// TestStartWrapperGateKeepsTheDeadWrappersPID: a wrapper that dies after
// it said it was ready, before Go wrote its meta.json, is not reaped
// meanwhile, so its pid cannot be another process's: meta.json records
// the wrapper's own start time, and the job is found ended (lost), not
// running as whoever took the pid.
func TestStartWrapperGateKeepsTheDeadWrappersPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), jobdir.NewID(time.Now()))
	host := gatedJob(t, dir, jobdir.Meta{Command: "echo ran"}, false)
	var start string
	report, err := startWrapper(context.Background(), dir, host.umask, func(pid int) (string, bool) {
		st, ok := proc.ReadStat(pid)
		if !ok {
			t.Errorf("the wrapper %d is gone when it says it is ready", pid)
			return "", false
		}
		start = st.Start
		syscall.Kill(pid, syscall.SIGKILL)
		// Dead: a zombie while nobody reaps it, gone once reaped.
		settled(func() bool { st, ok := proc.ReadStat(pid); return !ok || st.Zombie() })
		return host.write(dir, pid, 0o022)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := jobdir.DecodeMeta([]byte(report + "\n"))
	if err != nil {
		t.Fatalf("the launch of a wrapper killed before its meta.json reported %q: %v", report, err)
	}
	if got.ProcStart != start {
		t.Errorf("meta.json's proc_start is %q, the wrapper's was %q", got.ProcStart, start)
	}
}

// gatedJob makes dir the directory of a job of m (its id, version, times
// and workspace filled in) as a launch does before it starts the wrapper
// (job.sh, the blank status records), and returns what startWrapper's
// meta appends to meta.json's prefix for it.
func gatedJob(t *testing.T, dir string, m jobdir.Meta, lineBuffered bool) hostMeta {
	t.Helper()
	umask, ok := procUmask()
	if !ok {
		t.Fatal("no umask in /proc/self/status")
	}
	boot, _ := firstLine("/proc/sys/kernel/random/boot_id")
	m.Version, m.ID, m.Workspace = jobdir.Version, filepath.Base(dir), "default"
	m.Env, m.StartedAt = []string{}, time.Now().UTC().Truncate(time.Millisecond)
	files, err := shellgen.Launch{Meta: m, LineBuffered: lineBuffered}.Files()
	if err != nil {
		t.Fatal(err)
	}
	mkdir(t, dir, 0o700)
	write(t, dir+"/job.sh", files.Wrapper)
	write(t, dir+"/exit_code.tmp", "   \n")
	write(t, dir+"/ended_at.tmp", strings.Repeat(" ", 24)+"\n")
	write(t, dir+"/stop.tmp", strings.Repeat(" ", 31)+"\n")
	return hostMeta{prefix: files.MetaPrefix, lineBuffered: lineBuffered, umask: umask, boot: boot}
}

// TestStartWrapperWithoutMetaLeavesNothing: a wrapper that cannot write
// meta.json where the launcher did not ends without running the command,
// and its stdin keeper ends with it: nothing of a job without a meta.json
// runs on.
func TestStartWrapperWithoutMetaLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), jobdir.NewID(time.Now()))
	host := gatedJob(t, dir, jobdir.Meta{Command: "echo ran", Stdin: true}, false)
	if err := syscall.Mkfifo(dir+"/stdin", 0o600); err != nil {
		t.Fatal(err)
	}
	// The wrapper's write of meta.json.tmp fails.
	mkdir(t, dir+"/meta.json.tmp", 0o700)
	report, err := startWrapper(context.Background(), dir, host.umask, func(int) (string, bool) { return "", false })
	if err != nil || report != "nometa" {
		t.Fatalf("a wrapper that could not write meta.json: reported %q, %v; want nometa", report, err)
	}
	if !settled(func() bool { return len(holders(t, dir+"/stdin")) == 0 }) {
		t.Errorf("processes still hold the stdin of a job without meta.json: %v", holders(t, dir+"/stdin"))
	}
	if out, _ := os.ReadFile(dir + "/stdout.log"); len(out) != 0 {
		t.Errorf("stdout.log = %q: the command ran", out)
	}
}

// holders returns the pids of the processes with name open.
func holders(t *testing.T, name string) []string {
	t.Helper()
	fds, err := filepath.Glob("/proc/[0-9]*/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == name {
			pids = append(pids, strings.Split(fd, "/")[2])
		}
	}
	return pids
}

// TestWriteJobFilesSaysWhy: a job's files that cannot be written are
// refused with the system's words (a CI run on a file system out of
// inodes got only "is the disk full?").
func TestWriteJobFilesSaysWhy(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	got := writeJobFiles(gone, "ws", shellgen.LaunchFiles{Wrapper: "true\n"}, 0o077)
	if !strings.Contains(got, "cannot write the job's files in ws (is the disk full?): "+syscall.ENOENT.Error()) {
		t.Errorf("refusal %q, want the system's words", got)
	}
}
