package local

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
	"github.com/bgjob/bgjob/shellgen"
)

// status returns, for a client whose job files are on this machine
// (a Watcher's), what status.sh would print for refs, made in Go, when
// every ref is the id of a job, or a name nativeFind finds, with a
// meta.json of at most 8 KiB
// (bg_metaline reads one larger otherwise): its files' records, then the
// count of its live processes, from a scan of /proc made as the script
// makes it (procLook; none for an ended job whose leftovers are recorded),
// and the leftovers record written where the script would write it. Any
// other case (a name the index does not give, an odd byte in a file or a stat line, a root the
// script would refuse, a count that would include this process) is the
// script's (ok false): it stays the specification, and this is a copy of
// it, compared byte for byte with it (TestNativeStatusIsTheScripts,
// TestNativeLooksAtProcesses, and every status of the e2e tests under
// BGJOB_NATIVE_CHECK).
func (a answerer) status(q shellgen.Status) (out string, ok bool) {
	begin, boot, ok := a.nativeBegin()
	if !ok || len(q.Refs) == 0 {
		return "", false
	}
	dirs := make([]string, len(q.Refs))
	for i, ref := range q.Refs {
		if dirs[i], ok = a.nativeFind(ref); !ok {
			return "", false
		}
	}
	l := newProcLook(boot, a.procs)
	l.ports, l.skipRunning = q.Ports, q.SkipRunningCount
	return l.records(begin, dirs)
}

// records returns begin, then the records of the jobs in dirs (obs),
// the end marker, and records their leftovers: what the end of status.sh
// and wait.sh prints and writes; not ok where the script must make them.
func (l *procLook) records(begin string, dirs []string) (string, bool) {
	defer l.done()
	var b strings.Builder
	b.WriteString(begin)
	for _, dir := range dirs {
		obs, ok := l.obs(dir)
		if !ok {
			return "", false
		}
		b.WriteString(obs)
	}
	if !l.leftovers() {
		return "", false
	}
	b.WriteString(nativeEnd)
	return b.String(), true
}

// nativeFind is bg_find where it needs no search: the directory of the
// job ref names, its id (whether a job is there is the look's to say), or
// a name that no directory entry has and whose index entry
// (.names/NAME) holds an id whose meta.json line carries the name. Any
// other case is the script's (not ok): it searches the jobs, or refuses.
func (a answerer) nativeFind(ref string) (string, bool) {
	ws := filepath.Join(a.root, a.workspace)
	if jobdir.IsID(ref) {
		return filepath.Join(ws, ref), true
	}
	if _, err := os.Lstat(filepath.Join(ws, ref)); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	id, there, ok := lineIfThere(filepath.Join(ws, jobdir.NamesDir, ref))
	if !ok || !there || id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzT-") != "" {
		return "", false
	}
	dir := filepath.Join(ws, id)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	m, ok := readMeta(dir)
	if !ok || !strings.Contains(m.line, `"name":"`+ref+`"`) {
		return "", false
	}
	return dir, true
}

// wait returns, as status, what wait.sh would print for one
// look (bg_once) at the jobs refs names, made in Go: W pending when not
// all of them have ended (with any, none of them), then each job's
// records and the leftovers record as status.sh's. Whether a job has
// ended is decided first, as the script does (bg_running), before its
// records are read: a job that ends in between is reported pending, and
// looked at again, never taken as ended while it runs.
func (a answerer) wait(refs []string, any bool) (out string, ok bool) {
	begin, boot, ok := a.nativeBegin()
	if !ok || len(refs) == 0 {
		return "", false
	}
	dirs := make([]string, len(refs))
	left, done := 0, 0
	for i, ref := range refs {
		if dirs[i], ok = a.nativeFind(ref); !ok {
			return "", false
		}
		run, ok := wrapperRunning(dirs[i], boot)
		if !ok {
			return "", false
		}
		if run {
			left++
		} else {
			done++
		}
	}
	if left > 0 && !(any && done > 0) {
		begin += "W\tpending\n"
	}
	return newProcLook(boot, a.procs).records(begin, dirs)
}

// wrapperRunning is bg_running: the job in dir has a meta.json that names
// its wrapper (readMeta), no exit_code, and its wrapper, on this boot, is
// the live process of the start time meta.json records; not ok where the
// script reads meta.json otherwise.
func wrapperRunning(dir, boot string) (running, ok bool) {
	m, ok := readMeta(dir)
	if !ok || !m.picked {
		return false, ok
	}
	if exited(dir) || m.boot != boot {
		return false, true
	}
	pid, err := strconv.Atoi(m.pid)
	if err != nil {
		return false, false
	}
	start, zombie, found := proc.Start(pid)
	return found && !zombie && start != "" && start == m.start, true
}

// list returns, as nativeStatus, what list.sh would print for q,
// made in Go, when q lists one workspace (not every workspace, not the
// owned jobs) and nativeStatus could make each job it prints: the
// directory names that are ids, newest first, before
// q.Before, at most q.Max, then an N record if more are left.
func (a answerer) list(q shellgen.List) (pieces []string, ok bool) {
	if q.AllWorkspaces || q.Owned {
		return nil, false
	}
	begin, boot, ok := a.nativeBegin()
	if !ok {
		return nil, false
	}
	l := newProcLook(boot, a.procs)
	defer l.done()
	l.skipRunning, l.ports = q.SkipRunningCount, q.Ports
	ws := filepath.Join(a.root, a.workspace)
	// Newest first: a page of q.Max is decided by its jobs and the next
	// one, unless some of them are passed over.
	k := 0
	if q.Max > 0 {
		k = q.Max + 1
	}
	next := newestFirst(ws, q.Before, k)
	// A piece for each job, not one string: at 10,000 jobs the records
	// are megabytes, and a string grown to hold them is copied each time
	// it doubles.
	b := []string{begin}
	n := 0
	for {
		id, more, ok := next()
		if !ok {
			return nil, false
		}
		if !more {
			break
		}
		dir := filepath.Join(ws, id)
		// A launch under way is not a job (launching): looked for only
		// where meta.json is not read, not a stat more for every job.
		if q.Max > 0 && n >= q.Max {
			// Not one removed since the listing ([ -d ]), nor a launch.
			if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || launching(dir) {
				continue
			}
			b = append(b, "N\tmore\n")
			break
		}
		obs, ok := l.obs(dir)
		if !ok {
			// Removed since the listing, as the script passes it over.
			if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) || launching(dir) {
				continue
			}
			return nil, false
		}
		b = append(b, obs)
		n++
	}
	if !l.leftovers() {
		return nil, false
	}
	return append(b, nativeEnd), true
}

// launching is bg_launching: the job directory dir has no meta.json and
// changed within the last minute, by its modification time: a launch
// under way, not yet a job, which ls passes over.
func launching(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, jobdir.MetaFile)); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	fi, err := os.Lstat(dir)
	return err == nil && time.Since(fi.ModTime()) <= time.Minute
}

// nativeEnd is the end marker every script prints last (bg_end).
const nativeEnd = "\n@@bgjob-end@@\n"

// nativeBegin returns what every script prints first (begin.sh: the begin
// marker, the B record of the boot id) where a read may be made in Go: on
// this machine, with /proc, under a root and a
// workspace that are directories of this user, not links (bg_readroot
// refuses links and a root of another user; the script says how).
func (a answerer) nativeBegin() (begin, boot string, ok bool) {
	if a.root == "" {
		return "", "", false
	}
	if !ownDir(a.root) || !ownDir(filepath.Join(a.root, a.workspace)) {
		return "", "", false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return "", "", false
	}
	boot, ok = firstLine("/proc/sys/kernel/random/boot_id")
	if !ok || boot == "" {
		return "", "", false
	}
	return "\n@@bgjob-begin@@\nB\t" + boot + "\n", boot, true
}

// ownDir says whether dir is a directory, not a symbolic link, owned by
// this process's effective user: what bg_readroot asks of the root and
// the workspace (it refuses the others; the script says how).
func ownDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// obs returns bg_obs's records of the job in dir: bg_obsrec's, then the
// L record of its live processes (live), then with ports the p records
// of the ports they listen on (portRecords); not ok where the script
// must make them.
func (l *procLook) obs(dir string) (string, bool) {
	// An ended job whose records a look of this Runtime kept.
	if obs, ok := l.cache.endedRecs(dir); ok {
		return obs, true
	}
	// The wrapper's last steps are its own (bg_obs, bg_finishing): the
	// job is read, and its processes counted from a scan made, once its
	// wrapper has ended.
	recorded := false
	if !l.rescan && exited(dir) {
		left, there, ok := lineIfThere(filepath.Join(dir, "leftovers"))
		if !ok {
			return "", false
		}
		recorded = there && left == "0"
		if !recorded && finishing(dir, l.boot) {
			l.scanned = false
		}
	}
	obs, meta, ok := nativeObsRec(dir)
	if !ok {
		return "", false
	}
	if l.skipRunning && wrapperAlive(obs, meta, l.boot) {
		return obs, true
	}
	// An ended job recorded without leftovers stays so (exit_code and
	// leftovers are written once): live would read both again to say 0.
	n := 0
	if recorded {
		l.pids, l.recorded = nil, true
	} else if n, ok = l.live(dir); !ok {
		return "", false
	}
	obs += "L\t" + strconv.Itoa(n) + "\tproc\n"
	if l.recorded {
		l.cache.keepEnded(dir, obs, meta, time.Now())
	}
	if !l.ports || n == 0 {
		return obs, true
	}
	ports, ok := portRecords(l.pids)
	return obs + ports, ok
}

// wrapperAlive says whether obs, bg_obsrec's records of a job whose
// meta.json line is meta, show its wrapper alive on this boot (boot) and
// no exit code: bg_obs's test of a job whose processes bg_countrun=0
// leaves uncounted.
func wrapperAlive(obs, meta, boot string) bool {
	if strings.Contains(obs, "\nX\t") || strings.Contains(obs, "\nU\t") {
		return false
	}
	m := pickMeta(meta)
	_, p, found := strings.Cut(obs, "\nP\t")
	p, _, _ = strings.Cut(p, "\n")
	return found && m.picked && p != "" && p == m.start && boot != "" && m.boot == boot
}

// nativeObsRec returns bg_obsrec's records (J, M, P, X, T, S, Y, Q, s, U, I, r) of
// the job in dir, and its meta.json line, or not ok for a job without a meta.json of at most 8
// KiB, or a file read otherwise than the shell would read it. As the
// script, it looks at the wrapper before it reads exit_code: a job that
// ends in between is seen ended, never lost.
func nativeObsRec(dir string) (recs, meta string, ok bool) {
	return obsRec(dir, "")
}

// obsRec is nativeObsRec, given, unless "", meta.json's line (known) as
// the launcher has it from the wrapper's report: it is not read from
// the file, whatever its size, but one over jobdir.MaxMetaSize is
// reported by its size (a V record), as bg_metaline does.
func obsRec(dir, known string) (recs, meta string, ok bool) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", "", false
	}
	mfile := filepath.Join(dir, "meta.json")
	line, big, ok := metaLine(mfile, known)
	if !ok {
		return "", "", false
	}
	var rec strings.Builder
	if big {
		rec.WriteString("J\t" + escRecord(dir) + "\nV\t" + strconv.Itoa(jobdir.MaxMetaSize) + "\n")
	} else {
		rec.WriteString("J\t" + escRecord(dir) + "\nM\t" + line + "\n")
		p, ok := procRec(line)
		if !ok {
			return "", "", false
		}
		rec.WriteString(p)
	}
	x, written, ok := exitRec(dir)
	if !ok {
		return "", "", false
	}
	rec.WriteString(x)
	if !fileRecs(&rec, dir, written) {
		return "", "", false
	}
	// Read last, as the script's check: a removal takes meta.json first.
	if _, err := os.Stat(mfile); err != nil {
		return "", "", false
	}
	return rec.String(), line, true
}

// metaLine is bg_metaline of the meta.json file mfile: its first line,
// read from a regular file of at most 8 KiB, or known, unless "", the
// line the wrapper reported, whatever the file's size. big is a known
// line of a file over jobdir.MaxMetaSize, which is reported by its size
// (the line ""). Not ok for a file that is not there or not regular, or
// a line that is empty or read otherwise than the shell would read it.
func metaLine(mfile, known string) (line string, big, ok bool) {
	fi, err := os.Lstat(mfile)
	if err != nil || !fi.Mode().IsRegular() || known == "" && fi.Size() > 8192 {
		return "", false, false
	}
	if known != "" {
		if fi.Size() > jobdir.MaxMetaSize {
			return "", true, true
		}
		return known, false, true
	}
	line, ok = firstLine(mfile)
	return line, false, ok && line != ""
}

// procRec is the P record of meta.json's line: what bg_proc leaves in
// bg_s of the wrapper's process, its start time, "" for a process that
// is not there or is a zombie; none for a line bg_pick does not pick.
// The shell names the file by the digits as they are: a pid with a
// leading zero (no file) or too large for an int is the script's (not
// ok).
func procRec(line string) (string, bool) {
	m := pickMeta(line)
	if !m.picked {
		return "", true
	}
	pid, err := strconv.Atoi(m.pid)
	if err != nil || m.pid[0] == '0' {
		return "", false
	}
	start, zombie, found := proc.Start(pid)
	if !found || zombie {
		start = ""
	}
	return "P\t" + start + "\n", true
}

// exitRec is the X record of the job in dir: a whole exit_code (bg_exit),
// else a complete exit_code.tmp (bg_tmpcode: its first word a number);
// none for a job still running. written is when the file that holds the
// status was last written, the job's end where no ended_at says it (zero
// with no record).
func exitRec(dir string) (rec string, written time.Time, ok bool) {
	code, written, whole, ok := exitLine(dir)
	if !ok {
		return "", time.Time{}, false
	}
	if whole {
		return "X\t" + code + "\n", written, true
	}
	name := filepath.Join(dir, "exit_code.tmp")
	code, there, ok := lineIfThere(name)
	if !ok {
		return "", time.Time{}, false
	}
	w, _, _ := strings.Cut(code, " ")
	if !there || w == "" || strings.Trim(w, "0123456789") != "" {
		return "", time.Time{}, true
	}
	fi, err := os.Stat(name)
	if err != nil {
		return "", time.Time{}, false
	}
	return "X\t" + code + "\n", fi.ModTime(), true
}

// exitLine is bg_exit: the first line of the exit_code of the job in dir
// and the time the file was last written, whole when it ends with its
// newline (one not yet whole is a write under way, or cut short: the job
// has not recorded its end); not ok where the file cannot be read as the
// shell would read it.
func exitLine(dir string) (line string, written time.Time, whole, ok bool) {
	var buf [512]byte
	n, st, err := readHead(filepath.Join(dir, "exit_code"), buf[:], true)
	if err != nil {
		return "", time.Time{}, false, errors.Is(err, fs.ErrNotExist)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || n < 0 {
		return "", time.Time{}, false, false
	}
	l, _, found := bytes.Cut(buf[:n], []byte("\n"))
	if !found && n == len(buf) || bytes.IndexByte(l, 0) >= 0 {
		return "", time.Time{}, false, false
	}
	if !found {
		return "", time.Time{}, false, true
	}
	return string(l), time.Unix(st.Mtim.Unix()), true, true
}

// readHead reads the start of the file name into buf with one read,
// outside Go's poller and without an os.File (a look reads a few small
// files of each of thousands of jobs), and with stat its status: n is -1
// where the read failed (a directory). err is the open's, or the stat's.
func readHead(name string, buf []byte, stat bool) (n int, st syscall.Stat_t, err error) {
	// Without waiting for a writer where name is a FIFO (a user's, named
	// as a job file).
	fd, err := proc.OpenFd(name, syscall.O_NONBLOCK)
	if err != nil {
		return 0, st, err
	}
	defer syscall.Close(fd)
	if stat {
		if err := syscall.Fstat(fd, &st); err != nil {
			return 0, st, err
		}
	}
	for {
		n, err = syscall.Read(fd, buf)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return -1, st, nil
	}
	return n, st, nil
}

// exited reports whether the job in dir has recorded its end: its
// exit_code is whole (bg_exit).
func exited(dir string) bool {
	_, _, whole, _ := exitLine(dir)
	return whole
}

// fileRecs writes to rec the records of the job's one-line files in dir,
// each file's first line behind its tag, in bg_obsrec's order, for each
// file that is there; not ok where one is read otherwise than the shell
// would read it. Without an ended_at, the T record is written, unless
// zero (bg_mtime, to the millisecond).
func fileRecs(rec *strings.Builder, dir string, written time.Time) bool {
	// One listing of the directory, not a stat of each file: a job has
	// few of them, and the listing tells as the stats would have, had
	// they all been made at its moment.
	there, ok := entriesOf(dir, oneLineFiles[:])
	if !ok {
		return false
	}
	for i, f := range oneLineFiles {
		// A link to nothing is listed, and is not there ([ -e ]).
		l, listed := "", there&(1<<i) != 0
		if listed {
			var ok bool
			if l, listed, ok = lineIfThere(filepath.Join(dir, f.file)); !ok {
				return false
			}
		}
		switch {
		case listed:
			rec.WriteString(f.tag + l + "\n")
		case f.file == "ended_at" && !written.IsZero():
			rec.WriteString(f.tag + written.UTC().Format(jobdir.EndedAtLayout) + "\n")
		}
	}
	return true
}

// oneLineFiles are the job's one-line files of bg_obsrec, in its order,
// each with its record's tag.
var oneLineFiles = [...]struct{ file, tag string }{
	{"ended_at", "T\t"}, {"stop", "S\t"}, {"stdout.dropped", "Y\tstdout\t"},
	{"stderr.dropped", "Y\tstderr\t"}, {"queued", "Q\t"}, {"started_at", "s\t"}, {"not_run", "U\t"}, {"logs_full", "I\t"},
	{"ready_at", "r\t"},
}

// lineIfThere is bg_line: the first line of name (firstLine) and whether
// the file is there; not ok when it is there and cannot be read as the
// shell would read it, or cannot be looked at.
func lineIfThere(name string) (line string, there, ok bool) {
	var buf [8193]byte
	n, _, err := readHead(name, buf[:], false)
	if err != nil {
		return "", false, errors.Is(err, fs.ErrNotExist)
	}
	line, ok = headLine(buf[:], n)
	return line, true, ok
}

// firstLine is what `IFS= read -r bg_l <file` leaves in bg_l: the file's
// first line, without its newline. A file that is not there, cannot be
// read, or holds a byte the shells read each their own way (NUL), or a
// line too long to be sure of, is not ok.
func firstLine(name string) (string, bool) {
	var buf [8193]byte
	n, _, err := readHead(name, buf[:], false)
	if err != nil {
		return "", false
	}
	return headLine(buf[:], n)
}

// headLine is firstLine of the n bytes read into buf (-1: the read
// failed): an empty file reads as "".
func headLine(buf []byte, n int) (string, bool) {
	if n < 0 {
		return "", false
	}
	line, _, found := bytes.Cut(buf[:n], []byte("\n"))
	if !found && n == len(buf) || bytes.IndexByte(line, 0) >= 0 {
		return "", false
	}
	return string(line), true
}

// pickMeta is bg_pick of meta.json's line: the line split at commas as
// the shell splits it (a last empty field is no field), its last four
// fields the process fields, the first "pid":DIGITS, the third the
// start time and the fourth the boot id, each without its JSON quotes;
// not picked when there are not four or the pid is no digits.
func pickMeta(line string) meta {
	m := meta{line: line}
	fields := strings.Split(line, ",")
	if fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) < 4 {
		return m
	}
	n := len(fields)
	w, ok := strings.CutPrefix(fields[n-4], `"pid":`)
	if !ok || w == "" || strings.Trim(w, "0123456789") != "" {
		return m
	}
	m.picked, m.pid = true, w
	m.start = strings.TrimSuffix(strings.TrimPrefix(fields[n-2], `"proc_start":"`), `"`)
	if strings.Contains(m.start, "  ") {
		// A ps start time as bg_proc reads it: one space between words.
		m.start = strings.Join(strings.Fields(m.start), " ")
	}
	m.boot = strings.TrimSuffix(strings.TrimPrefix(fields[n-1], `"boot_id":"`), `"}`)
	return m
}

// escRecord is bg_esc: a backslash, newline or tab in s written as \\, \n
// or \t, as a record's field.
func escRecord(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(s)
}
