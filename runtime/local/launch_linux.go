package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
	"github.com/bgjob/bgjob/shellgen"
)

// launch launches the job of req (a Launch) in Go, doing what launch.sh
// does, in its order, with its files and their modes and contents, and
// returns the records the script would print; not ok where the script
// must run. It makes the simple launch of this machine (files under an
// absolute root, with /proc): no PTY, no stdin, no name, no queue (slots,
// after), no log cap, no pruning pass, no cgroup; the others are the script's, which
// stays the specification (TestNativeLaunchIsTheScripts compares the two).
//
// The wrapper is started as launch.sh starts it, "/bin/sh JOBDIR/job.sh
// run UMASK" in a session of its own with stdin and stderr /dev/null
// (with "gate": Go writes its meta.json, startWrapper), but as a child
// of this process, not reparented to init by a double
// fork: it is reaped (Wait) when it ends, so a long-lived caller (bgjob
// mcp) gathers no zombies. Go resets on exec the signals this process
// catches (SIGINT, SIGTERM, SIGHUP of the CLI and the MCP server) and
// keeps those it ignores, as the shell's exec does: the job gets the
// caller's dispositions, default SIGINT and SIGQUIT included.
func (a answerer) launch(ctx context.Context, l shellgen.Launch, files shellgen.LaunchFiles) (out string, ok bool, err error) {
	m := l.Meta
	if m.PTY || m.Stdin || m.Name != "" || l.Replace || len(m.After) > 0 || len(m.AfterOK) > 0 ||
		m.Slots > 0 || m.MaxLogSize > 0 || l.Prune != nil || l.Cgroup || a.root == "" {
		return "", false, nil
	}
	umask, ok := procUmask()
	if !ok {
		return "", false, nil
	}
	if err := ctx.Err(); err != nil {
		return "", true, err
	}
	boot, _ := firstLine("/proc/sys/kernel/random/boot_id")
	var b strings.Builder
	b.WriteString("\n@@bgjob-begin@@\nB\t" + boot + "\n")
	host := hostMeta{prefix: files.MetaPrefix, lineBuffered: l.LineBuffered, umask: umask, boot: boot}
	dir, report, refusal, err := launchDir(ctx, a.root, a.workspace, m.ID, m.Cwd, host, files)
	if err != nil {
		return "", true, err
	}
	if refusal == "" {
		// bg_obsrec, meta.json's line the wrapper's report. A job
		// removed at once, or whose files the shell would read its own
		// way, is reported as bg_obsrec would report it in an instant.
		recs, _, ok := obsRec(dir, report)
		if !ok {
			recs = ""
			if _, err := os.Stat(dir); err == nil {
				recs = "J\t" + escRecord(dir) + "\n"
			}
		}
		b.WriteString(recs)
	}
	b.WriteString(refusal + nativeEnd)
	return b.String(), true, nil
}

// launchDir does what launch.sh does for an unnamed job id under root
// and workspace, its command's working directory cwd, on this machine,
// from bg_makeroot to the start of its wrapper, which it gives meta.json
// (host). It returns the job's directory and meta.json's line, or the E
// record (with its newline) of a refusal. Its steps are the script's, in
// its order: the first that refuses ends the launch.
func launchDir(ctx context.Context, root, workspace, id, cwd string, host hostMeta, files shellgen.LaunchFiles) (dir, report, refusal string, err error) {
	um, _ := strconv.ParseUint(host.umask, 8, 32)
	mask := uint32(um)
	ws := root + "/" + workspace
	if refusal = makeRoot(root, ws, mask); refusal != "" {
		return "", "", refusal, nil
	}
	if refusal = checkCwd(cwd); refusal != "" {
		return "", "", refusal, nil
	}
	if dir, refusal = makeJobDir(ws, id, mask); refusal != "" {
		return "", "", refusal, nil
	}
	if refusal = writeJobFiles(dir, ws, files, mask); refusal != "" {
		return "", "", refusal, nil
	}
	report, refusal, err = startJob(ctx, dir, ws, host, mask)
	if refusal != "" || err != nil {
		return "", "", refusal, err
	}
	return dir, report, "", nil
}

// refuse is the E record, with its newline, of a launch refused for
// kind's reason (an errKind), msg its words.
func refuse(kind, msg string) string {
	return "E\t" + kind + "\t" + escRecord(msg) + "\n"
}

// readRoot is bg_readroot: a root or workspace ws that is a symbolic
// link, or a root directory of another user, is refused ("": none is).
func readRoot(root, ws string) string {
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return refuse(errKindRoot, "root "+root+" is a symbolic link")
	}
	if fi, err := os.Stat(root); err == nil && fi.IsDir() && !ownedByMe(fi) {
		return refuse(errKindRoot, "root "+root+" is owned by another user")
	}
	if fi, err := os.Lstat(ws); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return refuse(errKindRoot, "workspace "+ws+" is a symbolic link")
	}
	return ""
}

// makeRoot is bg_makeroot: after readRoot's checks, the root is made
// private where it is not a directory, and must be this user's; its mode
// is checked the first time, which .bgjob-root records. It returns the
// refusal, or "".
func makeRoot(root, ws string, mask uint32) string {
	if refusal := readRoot(root, ws); refusal != "" {
		return refusal
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		if err := mkdirAllPrivate(root, mask); err != nil {
			return refuse(errKindRoot, noRoot(root, err))
		}
	}
	fi, err := os.Stat(root)
	if err != nil || !ownedByMe(fi) {
		return refuse(errKindRoot, "root "+root+" is owned by another user")
	}
	if mfi, err := os.Stat(root + "/.bgjob-root"); err != nil || !ownedByMe(mfi) {
		if fi.IsDir() && fi.Mode().Perm()&0o022 != 0 {
			return refuse(errKindRoot, "root "+root+" is writable by other users (want mode 0700)")
		}
		// A root where it cannot be made (read-only, full, immutable) is
		// checked again next time, as bg_makeroot does; what cannot be
		// made in it says so.
		_ = writePrivate(root+"/.bgjob-root", "", mask)
	}
	return ""
}

// checkCwd refuses a working directory cwd that is missing or not a
// directory ("": none given, or one that is).
func checkCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return refuse(errKindCwd, "working directory "+cwd+" does not exist")
	}
	if !fi.IsDir() {
		return refuse(errKindCwd, "working directory "+cwd+" is not a directory")
	}
	return ""
}

// makeJobDir makes the workspace's directory ws where it is not one,
// then the job's directory for id in it, and returns the job's
// directory, or the refusal of a launch that could not make them.
func makeJobDir(ws, id string, mask uint32) (dir, refusal string) {
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		if err := mkdirAllPrivate(ws, mask); err != nil {
			return "", refuse(errKindIO, "cannot create workspace directory "+ws+reason(err))
		}
	}
	dir = ws + "/" + id
	if err := mkdirPrivate(dir, mask); err != nil {
		// Only a directory that is there is one that exists (launch.sh).
		if _, lerr := os.Lstat(dir); lerr == nil {
			return "", refuse(errKindExists, "cannot create job directory "+dir)
		}
		return "", refuse(errKindIO, "cannot create job directory "+dir+reason(err))
	}
	return dir, ""
}

// writeJobFiles writes the job's files in dir: its wrapper (job.sh), a
// command too long for an argument (command.sh), and the status records,
// made now while there is room (launch.sh). Where one cannot be written,
// what was made goes, and it returns the refusal; else "".
func writeJobFiles(dir, ws string, files shellgen.LaunchFiles, mask uint32) string {
	made := []struct{ name, body string }{{"job.sh", files.Wrapper}}
	if files.Command != "" {
		made = append(made, struct{ name, body string }{"command.sh", files.Command})
	}
	made = append(made, []struct{ name, body string }{
		{"exit_code.tmp", "   \n"},
		{"stop.tmp", strings.Repeat(" ", 31) + "\n"},
	}...)
	for _, f := range made {
		if err := writePrivate(dir+"/"+f.name, f.body, mask); err != nil {
			removeJobFiles(dir, "job.sh", "command.sh", "exit_code.tmp", "stop.tmp", "exit_code.pty")
			// With the system's words, as a directory that cannot be
			// made has them: full of blocks or of inodes, read-only.
			return refuse(errKindIO, "cannot write the job's files in "+ws+" (is the disk full?)"+reason(err))
		}
	}
	return ""
}

// startJob starts the wrapper of the job in dir (startWrapper), which it
// gives meta.json (host), and returns meta.json's line, or the refusal
// of a wrapper that did not start or could not write meta.json, or the
// error of a launch cut short.
func startJob(ctx context.Context, dir, ws string, host hostMeta, mask uint32) (report, refusal string, err error) {
	w, err := startWrapper(ctx, dir, host.umask, func(pid int) (string, bool) { return host.write(dir, pid, mask) })
	// A wrapper that said nothing has ended without a job (killed before
	// its traps, say by the interrupt that ends ctx): what the launch
	// made goes, unless the wrapper wrote meta.json, a job (lost).
	if _, merr := os.Lstat(dir + "/meta.json"); (w == "" || w == "nometa") && merr != nil {
		removeJobFiles(dir, "job.sh", "command.sh", "exit_code.tmp", "stop.tmp", "meta.json.tmp",
			"stdout.log", "stderr.log", "stdin", "stdin.keeper", "exit_code.pty", "terminal", "terminal.tmp")
	}
	if err != nil {
		return "", "", err
	}
	switch w {
	case "":
		return "", refuse(errKindStart, "the wrapper of job "+dir+" did not start"), nil
	case "nometa":
		return "", refuse(errKindIO, "cannot write the job's meta.json in "+ws+" (is the disk full?)"), nil
	}
	return w, "", nil
}

// startWrapper starts "/bin/sh DIR/job.sh run UMASK gate" in a session
// of its own, stdin and stderr /dev/null, its fd 3 the gate, and returns
// meta.json's line, "nometa", or "" when it did not start or said
// nothing (without trailing newlines, as $(...)). Once the wrapper says
// "ready" (its signals trapped, wrapper.sh), meta writes meta.json for
// it and "m" on the gate lets it go on; where meta cannot, the wrapper
// writes meta.json and reports it on its stdout, as for launch.sh. It is
// reaped when it ends. An end of ctx is not a cut: the wrapper writes
// meta.json itself, and its report, which comes in milliseconds, is
// waited for up to reportGrace more, then returned with ctx's error, so
// that a wrapper that said nothing is known to have made no job.
func startWrapper(ctx context.Context, dir, umask string, meta func(pid int) (string, bool)) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", nil
	}
	defer pr.Close()
	gr, gw, err := os.Pipe()
	if err != nil {
		pw.Close()
		return "", nil
	}
	// Closed, the gate says "write it yourself" to a wrapper that has not
	// read it yet.
	defer gw.Close()
	cmd := exec.Command("/bin/sh", dir+"/job.sh", "run", umask, "gate")
	cmd.Stdout = pw
	cmd.ExtraFiles = []*os.File{gr}
	cmd.Env = launchEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	pw.Close()
	gr.Close()
	if err != nil {
		return "", nil
	}
	// Reaped once meta.json is written: until then its pid, and its start
	// time in /proc, are the wrapper's even if it has died meanwhile.
	defer func() { go cmd.Wait() }()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(reportGrace, func() { pr.Close() }) })
	r := bufio.NewReader(pr)
	first, rerr := r.ReadString('\n')
	if first == "ready\n" {
		first = ""
		// Not once ctx has ended: the wrapper writes meta.json then.
		if ctx.Err() == nil {
			if line, ok := meta(cmd.Process.Pid); ok {
				// A wrapper gone meanwhile has the gate's write fail; its
				// meta.json stands, and a look finds it ended.
				gw.WriteString("m\n")
				stop()
				return line, nil
			}
		}
		gw.WriteString("w\n")
	}
	var rest []byte
	if rerr == nil {
		rest, rerr = io.ReadAll(r)
	}
	report := strings.TrimRight(first+string(rest), "\n")
	if !stop() {
		return report, ctx.Err()
	}
	if rerr != nil && rerr != io.EOF {
		return "", rerr
	}
	return report, nil
}

// hostMeta is what a job's wrapper appends to meta.json's prefix on this
// machine (wrapper.sh), for a launch made in Go to write it.
type hostMeta struct {
	prefix       []byte
	lineBuffered bool
	umask, boot  string
}

// write writes dir/meta.json for the wrapper pid, as the wrapper writes
// it (a file made private by mask's rule, renamed into place), and
// returns its line without the newline; not ok when it could not, the
// file left as it was.
func (h hostMeta) write(dir string, pid int, mask uint32) (string, bool) {
	st, ok := proc.ReadStat(pid)
	if !ok || st.PID != strconv.Itoa(pid) {
		return "", false
	}
	buf := ""
	if h.lineBuffered {
		// command -v stdbuf, in the PATH the wrapper has: this process's.
		buf = jobdir.HostField("buffering", jobdir.BufferingNoStdbuf)
		if _, err := exec.LookPath("stdbuf"); err == nil || errors.Is(err, exec.ErrDot) {
			buf = jobdir.HostField("buffering", jobdir.BufferingStdbuf)
		}
	}
	// bg_stamp's UTC stamp to the millisecond.
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	p := strconv.Itoa(pid)
	line := string(h.prefix) + fmt.Sprintf(jobdir.MetaHostFormat, buf, jobdir.HostField("umask", h.umask),
		jobdir.HostField("host_started_at", now), p, p, st.Start, h.boot)
	if writePrivate(dir+"/meta.json.tmp", line, mask) != nil || os.Rename(dir+"/meta.json.tmp", dir+"/meta.json") != nil {
		os.Remove(dir + "/meta.json.tmp")
		return "", false
	}
	return strings.TrimRight(line, "\n"), true
}

// launchEnv is env without what begin.sh unsets: a job started by a job
// is not a process of that job.
func launchEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BGJOB_JOB_ID=") && !strings.HasPrefix(kv, "BGJOB_JOB_DIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// procUmask returns this process's umask as /proc/self/status shows it
// (begin.sh reads it there: a read, not a change of the umask), e.g.
// "0022"; not ok without it.
func procUmask() (string, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "", false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			v = strings.TrimLeft(strings.TrimRight(v, "\n"), " \t")
			if len(v) < 3 || len(v) > 4 || strings.Trim(v, "01234567") != "" {
				return "", false
			}
			return v, true
		}
	}
	return "", false
}

// ownedByMe is test -O: the file's owner is the effective user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// mkdirPrivate is mkdir under the scripts' umask 077 (mode 0700) with
// this process's umask, mask: the mode is set again where mask takes
// bits of 0700 away.
func mkdirPrivate(dir string, mask uint32) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if mask&0o700 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// noRoot is bg_noroot's words for a root that could not be made, err
// the error of making it: the nearest path above it that is there is no
// directory, or the system's reason (err's errno) it could not be made in
// it.
func noRoot(root string, err error) string {
	d := root
	for {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		if i := strings.LastIndexByte(d, '/'); i >= 0 {
			if d = d[:i]; d == "" {
				d = "/"
			}
		} else {
			d = "."
		}
	}
	msg := "cannot create root " + root
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return msg + ": " + d + " is not a directory"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return msg + ": " + errno.Error() + " on " + d
	}
	return msg
}

// reason is ": " and the system's reason for err, as bg_reason words
// what mkdir says ("read-only file system"), or "" when err has none.
func reason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return ": " + errno.Error()
	}
	return ""
}

// mkdirAllPrivate is mkdir -p under umask 077: each directory made has
// mode 0700.
// A dir that is there but no directory fails as mkdir -p fails: "file
// exists", or "not a directory" for one of its parents.
func mkdirAllPrivate(dir string, mask uint32) error {
	if fi, err := os.Stat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.EEXIST}
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllPrivate(parent, mask); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
			}
			return err
		}
	}
	err := mkdirPrivate(dir, mask)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}

// writePrivate is printf >name under umask 077: a file made has mode
// 0600; one that is there keeps its mode and is truncated.
func writePrivate(name, body string, mask uint32) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	made := err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	}
	if err != nil {
		return err
	}
	if made && mask&0o600 != 0 {
		err = f.Chmod(0o600)
	}
	if _, werr := f.WriteString(body); err == nil {
		err = werr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeJobFiles is launch.sh's rm -f of names in dir, then its rmdir.
func removeJobFiles(dir string, names ...string) {
	for _, n := range names {
		os.Remove(dir + "/" + n)
	}
	syscall.Rmdir(dir)
}
