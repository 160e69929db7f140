package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"

	"github.com/bgjob/bgjob/internal/testneed"
)

// bgjobBinary returns a path that runs this test binary as the bgjob CLI
// (see TestMain): a link named bgjob.
func bgjobBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bgjob")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// jobProcesses returns the pids of live processes whose environment names
// a job directory under root, by directory.
func jobProcesses(root string) map[string][]int {
	procs := map[string][]int{}
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if dir, ok := strings.CutPrefix(kv, "BGJOB_JOB_DIR="); ok && strings.HasPrefix(dir, root+"/") {
				stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
				if err == nil && !strings.Contains(string(stat), ") Z ") {
					if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
						procs[dir] = append(procs[dir], pid)
					}
				}
			}
		}
	}
	return procs
}

// hasJobDir reports whether entries hold a job directory.
func hasJobDir(entries []os.DirEntry) bool {
	for _, e := range entries {
		if jobdir.IsID(e.Name()) {
			return true
		}
	}
	return false
}

// TestInterruptedRunLeavesNoPhantom: a run interrupted at any moment
// leaves a visible job (meta.json in place before its command runs) or
// nothing: an interrupted launch removes what it made, and ls reports
// every job. Runs with a name take the launch script, which the
// interrupt cut where it was: its job directory stayed, without
// meta.json (job.sh, the blank records), unlisted for a minute.
func TestInterruptedRunLeavesNoPhantom(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	r := rand.New(rand.NewPCG(7, 9))
	ws := filepath.Join(root, "default")
	// Runs cut within 1 to 15 ms; on a machine where none gets as far as
	// making its directory in that time, rounds of 40 more with twice the
	// times, until some do.
	var entries []os.DirEntry
	for scale := time.Millisecond; scale <= 128*time.Millisecond && !hasJobDir(entries); scale *= 2 {
		for i := range 40 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+r.IntN(15))*scale)
			var out, errb bytes.Buffer
			args := []string{"--root", root, "run", "-q", "--", "sleep 303"}
			if i%2 == 1 {
				args = []string{"--root", root, "run", "-q", "-n", "cut", "--", "sleep 303"}
			}
			cli.Run(ctx, args, strings.NewReader(""), &out, &errb)
			cancel()
		}
		entries, _ = os.ReadDir(ws)
	}
	dirs := 0
	incomplete := 0
	procs := jobProcesses(root)
	for _, e := range entries {
		if !jobdir.IsID(e.Name()) {
			continue
		}
		dirs++
		dir := filepath.Join(ws, e.Name())
		if _, err := os.Stat(filepath.Join(dir, jobdir.MetaFile)); err != nil {
			incomplete++
			if len(procs[dir]) > 0 {
				t.Errorf("phantom: %d processes run in %s, which has no meta.json", len(procs[dir]), dir)
			}
			files, _ := os.ReadDir(dir)
			var names []string
			for _, f := range files {
				names = append(names, f.Name())
			}
			t.Errorf("litter: an interrupted launch left %s without meta.json, holding %v", dir, names)
		}
	}
	for dir := range procs {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("phantom: processes run for %s, which does not exist", dir)
		}
	}
	if dirs == 0 {
		t.Fatal("no run got as far as making a job directory: the test proves nothing")
	}
	code, out, errs := bgjob(context.Background(), "--root", root, "ls", "--json")
	var page struct{ Jobs []jobdir.Job }
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
		t.Fatalf("ls: exit %d: %s %s", code, out, errs)
	}
	jobs := page.Jobs
	unreadable := 0
	for _, j := range jobs {
		if j.Status == jobdir.StatusUnreadable {
			unreadable++
		}
	}
	if len(jobs) != dirs-incomplete || unreadable != 0 {
		t.Errorf("ls reports %d jobs, %d unreadable; the workspace holds %d, %d without meta.json (launches of the last minute)", len(jobs), unreadable, dirs, incomplete)
	}
	t.Logf("%d job directories, %d without meta.json", dirs, incomplete)
}

// TestPruneRemovesOldIncompleteDirs: a directory a cut-short launch left
// (no meta.json) goes once it has not changed for a minute.
func TestPruneRemovesOldIncompleteDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "default")
	old := filepath.Join(ws, jobdir.NewID(time.Now().Add(-time.Hour)))
	young := filepath.Join(ws, jobdir.NewID(time.Now()))
	for _, d := range []string{old, young} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, "job.sh"), "true\n")
	}
	then := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := bgjob(context.Background(), "--root", root, "prune"); code != 0 {
		t.Fatalf("prune: exit %d: %s %s", code, out, errs)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("prune left the hour-old directory without meta.json: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("prune removed a directory a launch may still be filling: %v", err)
	}
}

// TestUmask: the command runs with the caller's umask; bgjob's files stay
// private.
func TestUmask(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	bin := bgjobBinary(t)
	for _, mask := range []string{"022", "002"} {
		dir := t.TempDir()
		f := filepath.Join(dir, "f")
		// The test binary is bgjob (TestMain), run with the umask set.
		cmd := exec.Command("sh", "-c", `umask "$1"; "$2" --root "$3" run -q -n "u$1" -- "touch $4" && "$2" --root "$3" wait "u$1"`, "sh", mask, bin, root, f)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("umask %s: %v\n%s", mask, err, out)
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o666) &^ map[string]os.FileMode{"022": 0o022, "002": 0o002}[mask]
		if fi.Mode().Perm() != want {
			t.Errorf("umask %s: the command made a file %v, want %v", mask, fi.Mode().Perm(), want)
		}
		code, out, _ := bgjob(context.Background(), "--root", root, "status", "--json", "u"+mask)
		var jobs []jobdir.Job
		if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
			t.Fatalf("status: %d %s", code, out)
		}
		if jobs[0].Umask != "0"+mask {
			t.Errorf("meta.json records umask %q, want 0%s", jobs[0].Umask, mask)
		}
		meta, _ := os.Stat(filepath.Join(jobs[0].Dir, jobdir.MetaFile))
		if meta == nil || meta.Mode().Perm() != 0o600 {
			t.Errorf("meta.json is not private: %v", meta.Mode())
		}
	}
}

// TestConcurrentNewReaders: two readers of one cursor at once never get
// the same bytes: one waits or is told the cursor is busy, and together
// they read the log once. A reader that dies frees the cursor.
func TestConcurrentNewReaders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ctx := context.Background()
	const size = 20 << 20
	if code, _, errs := bgjob(ctx, "--root", root, "run", "-q", "-n", "big", "--", `head -c 20971520 /dev/zero | tr '\0' y`); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := bgjob(ctx, "--root", root, "wait", "big"); code != 0 {
		t.Fatal(errs)
	}
	var (
		wg    sync.WaitGroup
		total [2]int
		busy  [2]bool
	)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &slowWriter{start: time.Now(), delay: 6 * time.Second}
			var errb bytes.Buffer
			code := cli.Run(ctx, []string{"--root", root, "logs", "--new", "--max-bytes", "0", "big"}, strings.NewReader(""), w, &errb)
			total[i] = int(w.n)
			busy[i] = code != 0 && strings.Contains(errb.String(), "cursor busy")
			if code != 0 && !busy[i] {
				t.Errorf("reader %d: exit %d: %s", i, code, errb.String())
			}
		}()
	}
	wg.Wait()
	if total[0]+total[1] != size || !(busy[0] || busy[1]) {
		t.Errorf("the readers got %d and %d bytes (busy: %v), want %d once in all and one told the cursor is busy", total[0], total[1], busy, size)
	}

	// A reader killed while it holds the cursor frees it: the kernel drops
	// the lock with its holder.
	bin := bgjobBinary(t)
	cmd := exec.Command("sh", "-c", `exec "$1" --root "$2" logs --new --max-bytes 0 --reader r2 big | sleep 30`, "sh", bin, root)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "default", "*", "cursor-r2.lock"))
		return len(m) == 1
	}) {
		t.Fatal("the reader did not take the cursor")
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	var out bytes.Buffer
	code := cli.Run(ctx, []string{"--root", root, "logs", "--new", "--reader", "r2", "big"}, strings.NewReader(""), &out, &out)
	if code != 0 {
		t.Errorf("the cursor stayed locked after its reader was killed: exit %d: %.200s", code, out.String())
	}
	if code, _, errs := bgjob(ctx, "--root", root, "rm", "big"); code != 0 {
		t.Errorf("rm after an interrupted reader: exit %d: %s", code, errs)
	}
}

// tmpfsRoot mounts a tmpfs of size for the test and returns it and a job
// root in it; the jobs are killed and the tmpfs unmounted at the end.
func tmpfsRoot(t *testing.T, size string) (mnt, root string) {
	t.Helper()
	if os.Getuid() != 0 {
		testneed.Missing(t, "root, to mount a tmpfs")
	}
	mnt = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	root = filepath.Join(mnt, "root")
	t.Cleanup(func() {
		killAll(root)
		exec.Command("umount", "-l", mnt).Run()
	})
	return mnt, root
}

// onTmpfs runs test locally and over SSH, each on a tmpfs of size of its
// own (tmpfsRoot), given its mount point and the flags that reach its root.
func onTmpfs(t *testing.T, size string, test func(t *testing.T, mnt string, flags []string)) {
	cfg := sshConfig(t, sshtest.Start(t))
	for _, ssh := range []bool{false, true} {
		name := "local"
		if ssh {
			name = "ssh"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mnt, root := tmpfsRoot(t, size)
			flags := []string{"--root", root}
			if ssh {
				flags = append(flags, "--ssh-config", cfg, "-H", "bgjob-test")
			}
			test(t, mnt, flags)
		})
	}
}

// TestFullDisk: on a small tmpfs, a job that fills the disk still records
// how it ended, and run on the full disk fails with a clear error and
// leaves no job behind.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	mnt, root := tmpfsRoot(t, "8M")
	ctx := context.Background()
	if code, _, errs := bgjob(ctx, "--root", root, "run", "-q", "-n", "fill", "--", "head -c 20000000 /dev/zero"); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	bgjob(ctx, "--root", root, "wait", "fill")
	// What the job's end freed (a block of a file it removed, seen once
	// in a loaded run) is filled again: run below must meet a full disk.
	if f, err := os.Create(filepath.Join(mnt, "filler")); err == nil {
		for buf := make([]byte, 512); err == nil; _, err = f.Write(buf) {
		}
		f.Close()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("the job did not fill the disk (%d blocks free, %v): the test proves nothing", st.Bavail, err)
	}
	code, out, errs := bgjob(ctx, "--root", root, "status", "--json", "fill")
	var jobs []jobdir.Job
	if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
		t.Fatalf("status: exit %d: %s %s", code, out, errs)
	}
	if j := jobs[0]; j.Status != jobdir.StatusExited || j.ExitCode == nil || *j.ExitCode == 0 || j.EndedAt == nil {
		t.Errorf("the job that filled the disk is %s (exit %v, ended %v), want exited with head's failure", j.Status, j.ExitCode, j.EndedAt)
	}
	// The wrapper's write of exit_code failed on the full disk: it said
	// so (logs_full) and wrote its status over the launcher's blank.
	if b, err := os.ReadFile(filepath.Join(jobs[0].Dir, "exit_code")); err != nil || !regexp.MustCompile(`^\d+ *\n$`).Match(b) {
		t.Errorf("exit_code on the full disk = %q (%v), want the status padded to the launcher's blank", b, err)
	}
	if !jobs[0].LogsFull {
		t.Errorf("the job that filled the disk has no logs_full")
	}
	before, _ := os.ReadDir(filepath.Join(root, "default"))
	code, out, errs = bgjob(ctx, "--root", root, "run", "--", "true")
	if code == 0 || !strings.Contains(errs, "bgjob: error: ") || !strings.Contains(errs, "disk full") {
		t.Errorf("run on a full disk: exit %d, stdout %q, stderr %q; want a clear error", code, out, errs)
	}
	after, _ := os.ReadDir(filepath.Join(root, "default"))
	if len(after) != len(before) {
		t.Errorf("run on a full disk left %d new entries in the workspace", len(after)-len(before))
	}
}

// TestStopOnFullDisk: a stop on a full disk still records that it
// stopped the job (the launcher makes stop.tmp while there is room), so
// the job is killed (stop), not exited 143, locally and over SSH.
func TestStopOnFullDisk(t *testing.T) {
	t.Parallel()
	onTmpfs(t, "2M", func(t *testing.T, mnt string, flags []string) {
		ctx := context.Background()
		if code, _, errs := bgjob(ctx, append(flags, "run", "-q", "-n", "srv", "--", "sleep 60")...); code != 0 {
			t.Fatalf("run: %s", errs)
		}
		fillDisk(t, mnt)
		if code, out, errs := bgjob(ctx, append(flags, "stop", "srv")...); code != 0 || !strings.Contains(out, "killed (stop)") {
			t.Errorf("stop on a full disk: exit %d, stdout %q, stderr %q; want 0 and killed (stop)", code, out, errs)
		}
		code, out, errs := bgjob(ctx, append(flags, "status", "--json", "srv")...)
		var jobs []jobdir.Job
		if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
			t.Fatalf("status: exit %d: %s %s", code, out, errs)
		}
		if j := jobs[0]; j.Status != jobdir.StatusKilled || j.Reason != "stop" {
			t.Errorf("the job stopped on a full disk is %s (reason %q), want killed (stop)", j.Status, j.Reason)
		}
	})
}

// TestStopOnDiskKeptFull: a stop on a full disk that another writer keeps
// full (it takes each block the moment one is freed) still records that
// it stopped each job, and each wrapper records its status: killed (stop)
// 143, locally and over SSH. A record written by truncating its file gave
// the block up to the writer before its own write: exited 143 (no stop
// mark) or lost (no exit_code), four stops in six.
func TestStopOnDiskKeptFull(t *testing.T) {
	t.Parallel()
	onTmpfs(t, "2M", func(t *testing.T, mnt string, flags []string) {
		ctx := context.Background()
		const jobs = 6
		for i := range jobs {
			if code, _, errs := bgjob(ctx, append(flags, "run", "-q", "-n", "srv"+strconv.Itoa(i), "--", "sleep 60")...); code != 0 {
				t.Fatalf("run: %s", errs)
			}
		}
		fillDisk(t, mnt)
		f, err := os.OpenFile(filepath.Join(mnt, "fill"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The writer: a thread of its own that retries a one-byte write
		// without pause, as a program that ignores ENOSPC does.
		var taken atomic.Int64
		var done atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			fd := int(f.Fd())
			b := []byte{0}
			for !done.Load() {
				if n, _ := syscall.Write(fd, b); n > 0 {
					taken.Add(int64(n))
				}
			}
		}()
		for i := range jobs {
			name := "srv" + strconv.Itoa(i)
			if code, out, errs := bgjob(ctx, append(flags, "stop", name)...); code != 0 || !strings.Contains(out, "killed (stop)") {
				t.Errorf("stop %s on a disk kept full: exit %d, stdout %q, stderr %q; want 0 and killed (stop)", name, code, out, errs)
			}
		}
		done.Store(true)
		wg.Wait()
		f.Close()
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil || st.Bavail != 0 {
			t.Fatalf("the disk was not kept full (%d blocks free, %v): the test proves nothing", st.Bavail, err)
		}
		t.Logf("the writer took %d bytes freed during the stops", taken.Load())
		for i := range jobs {
			name := "srv" + strconv.Itoa(i)
			code, out, errs := bgjob(ctx, append(flags, "status", "--json", name)...)
			var got []jobdir.Job
			if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 {
				t.Fatalf("status: exit %d: %s %s", code, out, errs)
			}
			if j := got[0]; j.Status != jobdir.StatusKilled || j.Reason != "stop" || j.ExitCode == nil || *j.ExitCode != 143 {
				t.Errorf("%s stopped on a disk kept full is %s (reason %q, exit %s), want killed (stop) 143", name, j.Status, j.Reason, out)
			}
		}
	})
}

// TestNewReadOnFullDisk: logs --new whose cursor cannot be saved (a full
// disk) delivers the output and fails, saying the next read sends it
// again; it exited 0, and the next read repeated it unannounced. Locally
// and over SSH.
func TestNewReadOnFullDisk(t *testing.T) {
	t.Parallel()
	onTmpfs(t, "2M", func(t *testing.T, mnt string, flags []string) {
		ctx := context.Background()
		gate := filepath.Join(mnt, "gate")
		if code, _, errs := bgjob(ctx, append(flags, "run", "-q", "-n", "talk", "--",
			"echo one; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo two; exec sleep 300")...); code != 0 {
			t.Fatalf("run: %s", errs)
		}
		newRead := func() (int, string, string) { return bgjob(ctx, append(flags, "logs", "--new", "talk")...) }
		var code int
		var out, errs string
		if !eventually(20*time.Second, func() bool { code, out, errs = newRead(); return out == "one\n" }) {
			t.Fatalf("logs --new: exit %d, stdout %q, stderr %q; want one", code, out, errs)
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		logs, _ := filepath.Glob(filepath.Join(mnt, "root", "default", "*", "stdout.log"))
		if !eventually(20*time.Second, func() bool {
			b, _ := os.ReadFile(logs[0])
			return string(b) == "one\ntwo\n"
		}) {
			t.Fatal("the job did not write its second line")
		}
		fillDisk(t, mnt)
		for range 2 {
			code, out, errs = newRead()
			if code == 0 || out != "two\n" || !strings.Contains(errs, "bgjob: error: ") || !strings.Contains(errs, "read cursor") {
				t.Errorf("logs --new on a full disk: exit %d, stdout %q, stderr %q; want two, then an error that the cursor was not saved", code, out, errs)
			}
		}
		if err := os.Remove(filepath.Join(mnt, "fill")); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"two\n", ""} {
			if code, out, errs = newRead(); code != 0 || out != want {
				t.Errorf("logs --new with room again: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
			}
		}
	})
}

// fillDisk fills the file system mounted at mnt, and fails the test when
// room is left.
func fillDisk(t *testing.T, mnt string) {
	t.Helper()
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4<<10)
	for {
		if _, err := fill.Write(block); err != nil {
			break
		}
	}
	fill.Close()
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("the disk is not full (%d blocks free, %v): the test proves nothing", st.Bavail, err)
	}
}

// TestRunOnUnwritableRoot: run where the job directory cannot be made,
// on a file system remounted read-only or out of inodes, fails with an
// io error that says so, locally and over SSH; it said the job's
// directory existed (exists, which a caller retries with a new id).
func TestRunOnUnwritableRoot(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"read-only", "no inodes"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			onTmpfs(t, "4M", func(t *testing.T, mnt string, flags []string) {
				if fault == "no inodes" {
					if out, err := exec.Command("mount", "-o", "remount,nr_inodes=64", mnt).CombinedOutput(); err != nil {
						t.Fatalf("remount: %v: %s", err, out)
					}
				}
				ctx := context.Background()
				if code, _, errs := bgjob(ctx, append(flags, "run", "-q", "-n", "first", "--wait", "20s", "--", "echo one")...); code != 0 {
					t.Fatalf("run: %s", errs)
				}
				if fault == "read-only" {
					// Once the job's wrapper has closed its files.
					var out []byte
					if !eventually(20*time.Second, func() bool {
						var err error
						out, err = exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput()
						return err == nil
					}) {
						t.Fatalf("remount: %s", out)
					}
				} else {
					for i := 0; ; i++ {
						if err := os.Mkdir(filepath.Join(mnt, fmt.Sprintf("fill%d", i)), 0o700); err != nil {
							break
						}
					}
					var st syscall.Statfs_t
					if err := syscall.Statfs(mnt, &st); err != nil || st.Ffree != 0 {
						t.Fatalf("inodes are left (%d free, %v): the test proves nothing", st.Ffree, err)
					}
				}
				// A run --replace waited 30 s and more for a lock it could
				// not make, then said another run held it; logs --new ended
				// with the shell's own words.
				for _, args := range [][]string{{"run", "--", "true"}, {"run", "-n", "first", "--replace", "--", "true"}, {"logs", "--new", "first"}} {
					start := time.Now()
					code, out, errs := bgjob(ctx, append(flags, args...)...)
					if code == 0 || strings.Contains(errs, "exists") || !strings.HasPrefix(errs, "bgjob: error: ") || !strings.Contains(errs, "read-only or full") && !strings.Contains(errs, "read-only file system") && !strings.Contains(errs, "no space left on device") {
						t.Errorf("%v on a %s file system: exit %d, stdout %q, stderr %q; want an error that says why", args, fault, code, out, errs)
					}
					if took := time.Since(start); took > 20*time.Second {
						t.Errorf("%v on a %s file system took %s", args, fault, took)
					}
				}
			})
		})
	}
}

// TestBigArgv: a 300 KB argv, which no single "sh -c" argument can carry,
// runs, locally and over SSH: scripts that long go to the host on stdin.
func TestBigArgv(t *testing.T) {
	t.Parallel()
	word := strings.Repeat("a", 100_000)
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			args := append(tc.flags, "run", "-q", "-n", "big", "--", "echo", word, word, word)
			if code, _, errs := bgjob(ctx, args...); code != 0 {
				t.Fatalf("run with a 300 KB argv: exit %d: %s", code, errs)
			}
			if code, _, errs := bgjob(ctx, append(tc.flags, "wait", "big")...); code != 0 {
				t.Fatalf("wait: exit %d: %s", code, errs)
			}
			code, out, errs := bgjob(ctx, append(tc.flags, "logs", "big")...)
			if want := word + " " + word + " " + word + "\n"; code != 0 || out != want {
				t.Errorf("logs: exit %d, %d bytes (%s), want the %d bytes of the argv", code, len(out), errs, len(want))
			}
		})
	}
}

// TestCapHoldsAgainstAFastWriter: on a 64 MB tmpfs, yes with a 1 MiB
// --max-log-size never fills the disk: the drain enforces the cap as it
// writes, so the log never holds more than the cap and one read. The test
// watches until yes has written more than the disk holds; a machine too
// loaded to write that much within a minute cannot show it.
func TestCapHoldsAgainstAFastWriter(t *testing.T) {
	t.Parallel()
	_, root := tmpfsRoot(t, "64M")
	ctx := context.Background()
	if code, _, errs := bgjob(ctx, "--root", root, "run", "-q", "-n", "yes", "--max-log-size", "1M", "--", "yes"); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	log := ""
	maxBlocks := int64(0)
	var written int64
	start := time.Now()
	for deadline := start.Add(time.Minute); written < 64<<20 && time.Now().Before(deadline); {
		if log == "" {
			if m, _ := filepath.Glob(filepath.Join(root, "default", "*", "stdout.log")); len(m) == 1 {
				log = m[0]
			}
		}
		var st syscall.Stat_t
		if log != "" && syscall.Stat(log, &st) == nil {
			maxBlocks = max(maxBlocks, st.Blocks)
			written = st.Size
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _, errs := bgjob(ctx, "--root", root, "stop", "yes"); code != 0 {
		t.Fatalf("stop: %s", errs)
	}
	if held := maxBlocks * 512; held > 1<<20+64<<10+64<<10 {
		t.Errorf("the log held %d bytes on disk with a 1 MiB cap", held)
	}
	if written < 64<<20 {
		t.Skipf("yes wrote only %d bytes in %s: the disk could not have filled, the test would prove nothing", written, time.Since(start).Round(time.Millisecond))
	}
	code, out, errs := bgjob(ctx, "--root", root, "status", "--json", "yes")
	var jobs []jobdir.Job
	if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
		t.Fatalf("status: exit %d: %s %s", code, out, errs)
	}
	if j := jobs[0]; j.Status != jobdir.StatusKilled || j.StdoutDropped == 0 {
		t.Errorf("yes is %s with %d bytes dropped, want killed by stop, bytes dropped", j.Status, j.StdoutDropped)
	}
}

// TestInterruptedRunWaitNamesTheJob: a run --wait interrupted (Ctrl-C)
// once its job runs exits 130 and says on stderr which job goes on,
// locally and over SSH; the job still runs.
func TestInterruptedRunWaitNamesTheJob(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type res struct {
				code      int
				out, errs string
			}
			done := make(chan res, 1)
			go func() {
				code, out, errs := bgjob(ctx, append(tc.flags, "run", "-n", "interrupted", "--wait", "60s", "--", "sleep 300")...)
				done <- res{code, out, errs}
			}()
			var id string
			if !eventually(30*time.Second, func() bool {
				_, out, _ := bgjob(context.Background(), append(tc.flags, "status", "--json", "interrupted")...)
				var js []jobdir.Job
				if json.Unmarshal([]byte(out), &js) != nil || len(js) != 1 || js[0].Status != jobdir.StatusRunning {
					return false
				}
				id = js[0].ID
				return true
			}) {
				t.Fatal("the job never ran")
			}
			cancel()
			r := <-done
			if r.code != 130 || !strings.Contains(r.errs, "job "+id+" goes on in the background") {
				t.Errorf("interrupted run --wait: exit %d, stderr %q; want 130 and the job's id", r.code, r.errs)
			}
			wantStatus(t, tc.flags, map[string]jobdir.Status{id: jobdir.StatusRunning}, "after the interrupt")
		})
	}
}

// TestFullDiskSaysSo: a job whose output found the disk full (its writes
// failed, the job exited 0) says so: logs_full in status and logs --json,
// a hint beside logs; a job on a disk with room does not, locally and
// over SSH.
func TestFullDiskSaysSo(t *testing.T) {
	t.Parallel()
	onTmpfs(t, "2M", func(t *testing.T, mnt string, flags []string) {
		ctx := context.Background()
		run := func(name, cmd string) jobdir.Job {
			t.Helper()
			if code, _, errs := bgjob(ctx, append(flags, "run", "-q", "-n", name, "--", cmd)...); code != 0 {
				t.Fatalf("run %s: %s", name, errs)
			}
			bgjob(ctx, append(flags, "wait", name)...)
			code, out, errs := bgjob(ctx, append(flags, "status", "--json", name)...)
			var jobs []jobdir.Job
			if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
				t.Fatalf("status %s: exit %d: %s %s", name, code, out, errs)
			}
			return jobs[0]
		}
		if j := run("room", "echo fine"); j.LogsFull || j.Status != jobdir.StatusExited {
			t.Errorf("a job on a disk with room: %s, logs_full %v; want exited, no logs_full", j.Status, j.LogsFull)
		}
		j := run("fill", `head -c 5000000 /dev/zero | tr '\0' x; echo lost; exit 0`)
		if !j.LogsFull || j.Status != jobdir.StatusExited || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Errorf("a job whose output filled the disk: %s (exit %d), logs_full %v; want exited 0 and logs_full", j.Status, derefCode(j.ExitCode), j.LogsFull)
		}
		if code, out, errs := bgjob(ctx, append(flags, "status", "fill")...); code != 0 || !strings.Contains(out, "logs_full:") {
			t.Errorf("status of it: exit %d: %s %s; want a logs_full line", code, out, errs)
		}
		if code, _, errs := bgjob(ctx, append(flags, "logs", "--tail", "1", "fill")...); code != 0 || !strings.Contains(errs, "no space left") {
			t.Errorf("logs of it: exit %d, stderr %q; want a hint that output may be missing", code, errs)
		}
		if code, out, _ := bgjob(ctx, append(flags, "logs", "--json", "fill")...); code != 0 || !strings.Contains(out, `"logs_full":true`) {
			t.Errorf("logs --json of it: exit %d: %.300s; want logs_full", code, out)
		}
		// It is removed with its job, and the space with it.
		if code, _, errs := bgjob(ctx, append(flags, "rm", "fill")...); code != 0 {
			t.Errorf("rm of it: %s", errs)
		}
		if j := run("after", "echo fine"); j.LogsFull {
			t.Errorf("a job once the space is back: logs_full")
		}
	})
}

// TestInterruptedRunQuietPrintsTheId: a run -q interrupted (Ctrl-C) while
// it launches, whose job goes on all the same, prints that job's id on
// stdout, as an uninterrupted one does, so id=$(bgjob run -q ...) keeps
// the job it started. The interrupt comes 0 to 39 ms after the start;
// those that land during the launch are checked.
func TestInterruptedRunQuietPrintsTheId(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	landed := 0
	for i := range 40 {
		// The CLI's context ends as an interrupt ends it: cancelled.
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(time.Duration(i)*time.Millisecond, cancel)
		code, out, errs := bgjob(ctx, "--root", root, "run", "-q", "--", "sleep 300")
		timer.Stop()
		cancel()
		before, _, goes := strings.Cut(errs, " goes on in the background")
		if !goes {
			continue
		}
		landed++
		id := before[strings.LastIndex(before, " ")+1:]
		if code != 130 || strings.TrimSpace(out) != id {
			t.Errorf("interrupt after %d ms: exit %d, stdout %q, stderr %q; want 130 and the id %s on stdout", i, code, out, errs, id)
		}
	}
	t.Logf("%d of 40 interrupts landed while the launch ran", landed)
}
