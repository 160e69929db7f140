package local

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
)

// procLook is, made in Go, what a look script (status.sh, list.sh) learns
// of the host's processes through lib/procs.sh, and follows its rules
// step by step: bg_scan's groups, bg_scanenv's environments, bg_live's
// count of a job's live processes, and the jobs it found without any,
// which bg_leftovers records. One serves one look, as one script does.
// Where it cannot tell what the script would (a stat line it would split
// otherwise, a number too large), it is not ok and the script runs.
type procLook struct {
	// recorded: the job live counted last has ended, with its leftovers
	// record 0 (endedJob).
	recorded bool
	// self is the looking process (what the script's $$ is to it), euid
	// its effective user, boot the boot id begin.sh read (bg_boot).
	self, euid int
	boot       string
	// scanned: bg_pgs is set; groups are the bg_g_PGID, the live
	// processes by group.
	scanned bool
	groups  map[string][]int
	// unread are bg_pold: the processes of the scan whose environments
	// are not read; envs the bg_e_ID: those read that carry a job id.
	unread []scanProc
	envs   []envProc
	// blanks are bg_blanks: processes whose environment read empty.
	blanks []scanProc
	// wrappers are the bg_c_ID of bg_wrapperof, read once a scan (nil:
	// not yet): the pids whose command line holds an argument ending in
	// ID/job.sh, by id.
	wrappers map[string][]int
	// since is bg_since (-1: ""). Unlike bg_scanenv, a third call does
	// not read all that is left: a job's escapees are those started since
	// it, which the calls for it read, and reading those started before
	// every job looked at changes no count.
	since int64
	// skipRunning is bg_countrun=0: a job whose wrapper runs is not
	// counted (wrapperAlive).
	skipRunning bool
	// rescan is bg_lrescan; lun1 and lun2 bg_lun1 and bg_lun2.
	rescan     bool
	lun1, lun2 []string
	buf        []byte
	// ports is bg_withports: a job with live processes is followed by the
	// p records of the ports they listen on (bg_ports); pids are bg_lp,
	// the live processes live last found.
	ports bool
	pids  []int
	// cache is what the Runtime remembers between looks (nil: nothing);
	// warm says this look's scan is made from it (warmScan), next is what
	// it will remember. seen are the stat lines this look read, by pid,
	// once each; verified the groups whose members were read (group);
	// pgids the groups' names (parseProcStat); sbuf and spath observe's
	// buffers.
	cache    *procCache
	warm     bool
	next     map[int]cachedProc
	seen     map[int]observation
	verified map[string]bool
	pgids    map[string]string
	sbuf     []byte
	spath    []byte
	// listed are the names the scan read in /proc; vanished says a
	// process of the scan was gone before all of it was read (catchUp),
	// catchUps how many times this look listed /proc again.
	listed   []string
	vanished bool
	catchUps int
}

// maxCatchUps bounds how many times a look lists /proc again (catchUp).
const maxCatchUps = 2

// observation is a process's stat line as a look read it, and whether it
// was the scan's process, alive.
type observation struct {
	st    procStat
	alive bool
}

// scanProc is a live process of the scan.
type scanProc struct {
	pid   int
	start int64
	pgid  string
	// read: its stat line was read by this look's scan, and env is its
	// environment's key there. others: a warm scan found it another
	// user's (the owner of /proc/PID), whose environment is not read.
	read   bool
	others bool
	env    envKey
}

// envProc is a process whose environment carries the job id id.
type envProc struct {
	id string
	scanProc
}

func newProcLook(boot string, cache *procCache) *procLook {
	return &procLook{self: os.Getpid(), euid: os.Geteuid(), boot: boot, since: -1, cache: cache}
}

// done ends the look: the cache remembers it.
func (l *procLook) done() { l.cache.remember(l.next) }

// scan is bg_scan on /proc: one read of every process's stat, the live
// ones (not zombies) grouped by process group; warm, from what the last
// look found (warmScan), the zombies among the processes it knew are
// told apart only where they matter (group, scanenv). It forgets the
// environments read before.
func (l *procLook) scan() bool {
	l.scanned, l.groups, l.unread, l.envs, l.blanks, l.since = true, map[string][]int{}, l.unread[:0], nil, nil, -1
	l.wrappers = nil
	known, warm := l.cache.snapshot()
	l.warm, l.next, l.seen, l.verified, l.vanished = warm, nil, nil, nil, false
	if l.pgids == nil {
		l.pgids = map[string]string{}
	}
	d, err := proc.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	// The glob /proc/[0-9]*/stat.
	pids := names[:0]
	for _, name := range names {
		if name[0] >= '0' && name[0] <= '9' {
			pids = append(pids, name)
		}
	}
	// Read in parts at once, one a processor (a read of a stat file is
	// the kernel's work, each a few microseconds), each part's processes
	// kept in order, then put together in the order of the names.
	parts := min(runtime.GOMAXPROCS(0), 4, max(len(pids)/256, 1))
	l.listed = pids
	found := make([][]scanProc, parts)
	nexts := make([][]cachedPID, parts)
	oks, gone := make([]bool, parts), make([]bool, parts)
	var wg sync.WaitGroup
	for i := range parts {
		part := pids[i*len(pids)/parts : (i+1)*len(pids)/parts]
		if warm {
			wg.Go(func() { found[i], nexts[i], gone[i], oks[i] = warmScan(int(d.Fd()), l.euid, part, known) })
		} else {
			wg.Go(func() { found[i], gone[i], oks[i] = statScan(int(d.Fd()), part) })
		}
	}
	wg.Wait()
	l.vanished = slices.Contains(gone, true)
	if warm {
		l.next, l.seen, l.verified = make(map[int]cachedProc, len(pids)), map[int]observation{}, map[string]bool{}
	}
	for i, ps := range found {
		if !oks[i] {
			return false
		}
		for _, p := range ps {
			l.groups[p.pgid] = append(l.groups[p.pgid], p.pid)
			l.unread = append(l.unread, p)
			if warm && p.read {
				l.seen[p.pid] = observation{procStat{pid: p.pid, pgid: p.pgid, start: p.start, env: p.env}, true}
			}
		}
		for _, c := range nexts[i] {
			l.next[c.pid] = c.cachedProc
		}
	}
	return true
}

// observe returns the stat line of the scan's process pid, read once in
// a look (by the scan, or now), and whether it is still the scan's
// process (the same start time), alive (not a zombie); not ok for a line
// the script would split otherwise.
func (l *procLook) observe(pid int) (procStat, bool, bool) {
	if o, there := l.seen[pid]; there {
		return o.st, o.alive, true
	}
	if l.sbuf == nil {
		l.sbuf = make([]byte, 1024)
	}
	st, found, ok := readProcStat(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid), l.sbuf, &l.spath, l.pgids)
	if !ok {
		return st, false, false
	}
	alive := found && !st.zombie && st.start == l.next[pid].start
	l.seen[pid] = observation{st, alive}
	l.vanished = l.vanished || !alive
	return st, alive, true
}

// catchUp lists /proc again and adds to the scan the processes it did
// not list (their stat lines read): a process of the scan gone before
// all of it was read may have handed a job on to a child the scan never
// listed (a double fork; a process that hops from child to child), and a
// count without it would say fewer processes than are alive. Not ok for
// a stat line the script would split otherwise.
func (l *procLook) catchUp() bool {
	l.catchUps++
	l.vanished = false
	d, err := proc.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	listed := make(map[string]bool, len(l.listed))
	for _, name := range l.listed {
		listed[name] = true
	}
	var fresh []string
	for _, name := range names {
		if name[0] >= '0' && name[0] <= '9' && !listed[name] {
			fresh = append(fresh, name)
		}
	}
	l.listed = append(l.listed, fresh...)
	found, gone, ok := statScan(int(d.Fd()), fresh)
	if !ok {
		return false
	}
	l.vanished = gone
	for _, p := range found {
		l.groups[p.pgid] = append(l.groups[p.pgid], p.pid)
		l.unread = append(l.unread, p)
		if l.warm {
			l.seen[p.pid] = observation{procStat{pid: p.pid, pgid: p.pgid, start: p.start, env: p.env}, true}
		}
	}
	return true
}

// group returns the live members of the process group pgid, and whether
// it has any (bg_g_PGID is set). Warm, the members the scan knew by
// getpgid alone are read now, once a look, and kept while alive and
// still in the group.
func (l *procLook) group(pgid string) ([]int, bool, bool) {
	ps, there := l.groups[pgid]
	if !l.warm || !there || l.verified[pgid] {
		return ps, there, true
	}
	var live []int
	for _, p := range ps {
		st, alive, ok := l.observe(p)
		if !ok {
			return nil, false, false
		}
		if alive && st.pgid == pgid {
			live = append(live, p)
		}
	}
	l.verified[pgid] = true
	if len(live) == 0 {
		delete(l.groups, pgid)
		return nil, false, true
	}
	l.groups[pgid] = live
	return live, true, true
}

// statScan reads the stat file of each process in pids (names in /proc,
// whose descriptor is procFD) and returns the live ones (not zombies); not
// ok where the script would split a line or read a number differently.
// A process gone meanwhile is passed over, as grep -s does, and told of
// (gone).
func statScan(procFD int, pids []string) (found []scanProc, gone, ok bool) {
	var (
		buf   [1024]byte
		path  []byte
		pgids = map[string]string{}
	)
	found = make([]scanProc, 0, len(pids))
	for _, name := range pids {
		st, there, ok := readProcStat(procFD, name, buf[:], &path, pgids)
		if !ok {
			return nil, false, false
		}
		if !there || st.zombie {
			gone = true
			continue
		}
		found = append(found, scanProc{pid: st.pid, start: st.start, pgid: st.pgid, read: true, env: st.env})
	}
	return found, gone, true
}

// readProcAt reads the file name under the directory dir into buf: the whole
// of a /proc stat file, which the kernel makes at once, comes in one read
// shorter than buf; not ok when it is gone, or longer than buf.
func readProcAt(dir int, name string, buf []byte) ([]byte, bool) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == len(buf) {
			return nil, false
		}
		return buf[:n], true
	}
}

// read reads the file name into l's buffer, at most max bytes (0: 8 KiB),
// with a system call for each step (no poller, no allocation), and only
// when the file is this user's where owned is set; not ok when it cannot
// (a process gone, another user's).
func (l *procLook) read(name string, max int) ([]byte, bool) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	if max > 0 {
		// An environment: only a process of this user counts, and the
		// file's owner is the process's ([ -O /proc/PID ]).
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || int(st.Uid) != l.euid {
			return nil, false
		}
	}
	if l.buf == nil {
		l.buf = make([]byte, 8192)
	}
	n := 0
	for {
		if n == len(l.buf) {
			if max == 0 || n >= max {
				return nil, false
			}
			l.buf = append(l.buf, make([]byte, len(l.buf))...)
		}
		m, err := syscall.Read(fd, l.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			return l.buf[:n], true
		}
		n += m
	}
}

// jobIDVar is what the wrapper exports into the job's environment.
const jobIDVar = "BGJOB_JOB_ID="

// scanenv is bg_scanenv SINCE: read the environments of the processes not
// read yet that started at or after since, and keep those that carry a
// job id (each match grep -o would print). Warm, a process known to be
// another user's is passed over, and one whose verdict holds (procCache)
// is not read: its stat line is, for the key. Not ok for a stat line
// the script would split otherwise.
func (l *procLook) scanenv(since int64) bool {
	keep := l.unread[:0]
	var read []scanProc
	for _, p := range l.unread {
		if p.start < since {
			keep = append(keep, p)
			continue
		}
		if l.warm {
			if p.others {
				continue
			}
			st, alive, ok := l.observe(p.pid)
			if !ok {
				return false
			}
			if !alive {
				continue
			}
			p.pgid, p.env = st.pgid, st.env
			if c := l.next[p.pid]; c.clean && p.env.valid() && c.env == p.env {
				continue
			}
		}
		read = append(read, p)
	}
	// In parts at once, as scan reads the stat files.
	parts := min(runtime.GOMAXPROCS(0), 4, max(len(read)/64, 1))
	found := make([][]envProc, parts)
	blanks := make([][]scanProc, parts)
	clean := make([][]scanProc, parts)
	gone := make([]bool, parts)
	var wg sync.WaitGroup
	for i := range parts {
		part := read[i*len(read)/parts : (i+1)*len(read)/parts]
		wg.Go(func() { found[i], blanks[i], clean[i], gone[i] = envScan(l.euid, part) })
	}
	wg.Wait()
	l.vanished = l.vanished || slices.Contains(gone, true)
	for i, f := range found {
		l.envs = append(l.envs, f...)
		l.blanks = append(l.blanks, blanks[i]...)
		if !l.warm {
			continue
		}
		for _, p := range clean[i] {
			if c, there := l.next[p.pid]; there && p.env.valid() {
				c.clean, c.env = true, p.env
				l.next[p.pid] = c
			}
		}
	}
	l.unread = keep
	l.since = since
	return true
}

// envScan reads the environment of each process in ps that is euid's and
// returns those that carry a job id, once for each id (each match grep -o
// would print), those whose environment read empty (grep -L ”), and
// those whose environment was read and carries none (clean); gone says
// one was gone (or a zombie) before it was read.
func envScan(euid int, ps []scanProc) (found []envProc, blanks, clean []scanProc, gone bool) {
	r := procLook{euid: euid}
	for _, p := range ps {
		env, ok := r.read("/proc/"+strconv.Itoa(p.pid)+"/environ", 1<<30)
		if !ok {
			if start, zombie, found := proc.Start(p.pid); !found || zombie || start != strconv.FormatInt(p.start, 10) {
				gone = true
			}
			continue
		}
		if len(env) == 0 {
			blanks = append(blanks, p)
			continue
		}
		carries := false
		for {
			i := bytes.Index(env, []byte(jobIDVar))
			if i < 0 {
				break
			}
			env = env[i+len(jobIDVar):]
			if len(env) >= 22 && jobdir.IsID(string(env[:22])) {
				found = append(found, envProc{string(env[:22]), p})
				env = env[22:]
				carries = true
			}
		}
		if !carries {
			clean = append(clean, p)
		}
	}
	return found, blanks, clean, gone
}

// live is bg_live of the job in dir as a look (status, ls; bg_recorded
// 1) makes it: the number of its live processes but its wrapper, from the
// scan (made on the first call): the members of its process group when
// the group is tied to the job, those of the same user started since the
// job whose environment carries its id, and on a PTY job the other
// members of the terminal shell's group. An ended job with a leftovers
// record of 0 is not scanned for; one found without processes is noted
// for leftovers. Not ok where the script would count the looking process
// itself (it is the script's parent, not its $$) or reads a file
// otherwise. Each step below is one of the script's, in its order. The
// processes counted are left in pids.
func (l *procLook) live(dir string) (int, bool) {
	l.pids = nil
	lend, recorded, ok := endedJob(dir)
	l.recorded = ok && recorded
	if !ok {
		return 0, false
	}
	if recorded {
		return 0, true
	}
	if !l.scanned {
		if !l.scan() {
			return 0, false
		}
	} else if !l.rescan && lend != "" {
		// The scan was made before the job was seen ended.
		lend = "late"
	}
	j, here, ok := l.liveJob(dir)
	if !ok {
		return 0, false
	}
	if !here {
		return 0, true
	}
	// The environments of the processes started since the job (all,
	// when its start is not a number). Where a process of the scan was
	// gone before it was read, the processes started since the scan are
	// read too (catchUp) and the count made again, maxCatchUps times a
	// look at most.
	for {
		if (l.since < 0 || j.start < l.since) && !l.scanenv(j.start) {
			return 0, false
		}
		if l.pids, ok = l.count(j); !ok {
			return 0, false
		}
		if !l.vanished || l.catchUps >= maxCatchUps {
			break
		}
		if !l.catchUp() || !l.scanenv(max(l.since, 0)) {
			return 0, false
		}
	}
	n := len(l.pids)
	if n == 0 && !l.rescan {
		l.noteEmpty(dir, lend)
	}
	return n, true
}

// count is the processes of the job j the scan found (its environments
// read): the members of its group, those that carry its id, and on a PTY
// job the other members of its terminal shell's group.
func (l *procLook) count(j liveJob) ([]int, bool) {
	members, ok := l.groupMembers(j)
	if !ok {
		return nil, false
	}
	esc, ok := l.carriers(j)
	if !ok {
		return nil, false
	}
	if esc, ok = l.ptyMembers(j, esc); !ok {
		return nil, false
	}
	return append(members, esc...), true
}

// endedJob is bg_live's look at an ended job (its exit_code whole): one
// whose leftovers record holds 0 is recorded without processes, which a
// look takes at its word; another has lend "1", to be noted for
// leftovers if it is found without any. A job still running has lend "".
func endedJob(dir string) (lend string, recorded, ok bool) {
	if !exited(dir) {
		return "", false, true
	}
	left, there, ok := lineIfThere(filepath.Join(dir, "leftovers"))
	if !ok {
		return "", false, false
	}
	if there && left == "0" {
		return "", true, true
	}
	return "1", false, true
}

// liveJob is what live goes by of a job: its directory and id, its
// meta.json as bg_meta reads it, whether its process group is tied to
// it (tied), and its start time, a number when numeric (0 otherwise).
type liveJob struct {
	dir, id string
	m       meta
	tied    bool
	start   int64
	numeric bool
}

// liveJob reads what live goes by of the job in dir. here is false for
// a job of another boot whose group is not tied to it: none of this
// boot's processes is its.
func (l *procLook) liveJob(dir string) (j liveJob, here, ok bool) {
	j = liveJob{dir: dir, id: filepath.Base(dir)}
	if j.m, ok = readMeta(dir); !ok {
		return j, false, false
	}
	j.tied = l.tied(j.m)
	if !j.tied && j.m.picked && j.m.boot != l.boot {
		return j, false, true
	}
	// An unreadable meta.json (not picked): the processes that carry the
	// job's id count, whenever they started, and its wrapper, found by its
	// command line, ties its group.
	if !j.m.picked {
		w, ok := l.wrapperOf(dir)
		if !ok {
			return j, false, false
		}
		if w > 0 {
			j.tied, j.m.pid = true, strconv.Itoa(w)
		}
	}
	j.start, j.numeric, ok = metaStart(j.m)
	return j, true, ok
}

// metaStart is a job's start time as bg_live and bg_lblank compare it:
// a number when numeric, else 0 (any process started since); not ok for
// digits too many for a number.
func metaStart(m meta) (start int64, numeric, ok bool) {
	if m.start == "" || strings.Trim(m.start, "0123456789") != "" {
		return 0, false, true
	}
	start, err := strconv.ParseInt(m.start, 10, 64)
	return start, true, err == nil
}

// groupMembers is bg_lgm: the members of the job's process group, when
// the group is tied to it, but its wrapper, which leads it.
func (l *procLook) groupMembers(j liveJob) ([]int, bool) {
	if !j.tied {
		return nil, true
	}
	group, _, ok := l.group(j.m.pid)
	if !ok {
		return nil, false
	}
	var members []int
	for _, p := range group {
		if p == l.self {
			return nil, false
		}
		if strconv.Itoa(p) != j.m.pid {
			members = append(members, p)
		}
	}
	return members, true
}

// carriers is bg_lesc from the environments: the processes that carry
// the job's id, outside its group when it is tied, but its wrapper,
// started since the job when its start is a number, each once.
func (l *procLook) carriers(j liveJob) ([]int, bool) {
	var esc []int
	for _, e := range l.envs {
		if e.id != j.id || j.tied && e.pgid == j.m.pid || strconv.Itoa(e.pid) == j.m.pid {
			continue
		}
		if j.numeric && e.start < j.start || slices.Contains(esc, e.pid) {
			continue
		}
		if e.pid == l.self {
			return nil, false
		}
		esc = append(esc, e.pid)
	}
	return esc, true
}

// ptyMembers adds to esc, on a PTY job whose group is tied to it, the
// other members of its terminal shell's group, each once: exit_code.pty
// holds "run PID START" while the command runs in that group, and the
// shell is the process of that pid and start time.
func (l *procLook) ptyMembers(j liveJob, esc []int) ([]int, bool) {
	if !j.tied {
		return esc, true
	}
	line, there, ok := lineIfThere(filepath.Join(j.dir, "exit_code.pty"))
	if !ok {
		return nil, false
	}
	q, s, ok := ptyShell(line)
	if !there || !ok {
		return esc, true
	}
	members, there, ok := l.group(q)
	if !ok {
		return nil, false
	}
	if !there {
		return esc, true
	}
	pid, err := strconv.Atoi(q)
	if err != nil {
		return nil, false
	}
	if cur, _, _ := proc.Start(pid); cur != s {
		return esc, true
	}
	for _, p := range members {
		if p == pid || slices.Contains(esc, p) {
			continue
		}
		if p == l.self {
			return nil, false
		}
		esc = append(esc, p)
	}
	return esc, true
}

// noteEmpty notes an ended job found without processes for leftovers:
// lend "1" on bg_lun1, "late" (its scan made before it was seen ended)
// on bg_lun2; a running job (lend "") is not noted.
func (l *procLook) noteEmpty(dir, lend string) {
	switch lend {
	case "1":
		l.lun1 = append(l.lun1, dir)
	case "late":
		l.lun2 = append(l.lun2, dir)
	}
}

// jobShIDs is bg_wrapperof's grep -o: the ids of each "/ID/job.sh" in b,
// in order. No regexp: one compiled at package init would cost every
// bgjob process.
func jobShIDs(b []byte) []string {
	const tail = "/job.sh"
	var ids []string
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(tail))
		if j < 0 {
			return ids
		}
		end := i + j
		if start := end - 22; start >= 1 && b[start-1] == '/' && jobdir.IsID(string(b[start:end])) {
			ids = append(ids, string(b[start:end]))
		}
		i = end + len(tail)
	}
}

// wrapperOf is bg_wrapperof: the pid of a live process of this user
// whose command line is "/bin/sh dir/job.sh run ..." or "... pty", its
// second argument dir/job.sh or the same file by another path (0: none);
// not ok where a read fails otherwise than for a process gone.
func (l *procLook) wrapperOf(dir string) (int, bool) {
	id := filepath.Base(dir)
	if !jobdir.IsID(id) || strings.Contains(dir, "\n") {
		return 0, true
	}
	if l.wrappers == nil {
		l.wrappers = map[string][]int{}
		names, err := filepath.Glob("/proc/[0-9]*/cmdline")
		if err != nil {
			return 0, false
		}
		for _, name := range names {
			b, ok := l.read(name, 0)
			if !ok {
				continue
			}
			pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "/proc/"), "/cmdline"))
			if err != nil {
				continue
			}
			for _, id := range jobShIDs(b) {
				l.wrappers[id] = append(l.wrappers[id], pid)
			}
		}
	}
	want := dir + "/job.sh"
	for _, pid := range l.wrappers[id] {
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+strconv.Itoa(pid), &st) != nil || int(st.Uid) != l.euid {
			continue
		}
		b, ok := l.read("/proc/"+strconv.Itoa(pid)+"/cmdline", 0)
		if !ok {
			continue
		}
		// As the script reads them: a newline within an argument is
		// \001 there.
		args := strings.Split(strings.ReplaceAll(string(b), "\n", "\x01"), "\x00")
		if len(args) < 3 || args[0] != "/bin/sh" || (args[2] != "run" && args[2] != "pty") {
			continue
		}
		if args[1] == want || sameFile(args[1], want) {
			return pid, true
		}
	}
	return 0, true
}

// sameFile is test's -ef: a and b name the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// tied is bg_tied: the job's process group can be tied to it: same boot,
// and its pid not handed to an unrelated process leading a group.
func (l *procLook) tied(m meta) bool {
	if !m.picked || m.pid == "1" || m.boot != l.boot {
		return false
	}
	pid, err := strconv.Atoi(m.pid)
	if err != nil {
		return false
	}
	st, found := proc.ReadStat(pid)
	return !found || st.Zombie() || st.Start == m.start || st.PGID != m.pid
}

// finishWait bounds bg_finishing's wait for a wrapper to end.
const finishWait = 100 * time.Millisecond

// finishing is bg_finishing: it waits while the wrapper of the job in dir
// (on this boot, the live process of the start time meta.json records)
// runs, finishWait at most, and says whether it was running.
func finishing(dir, boot string) bool {
	m, ok := readMeta(dir)
	if !ok || !m.picked || m.boot != boot {
		return false
	}
	pid, err := strconv.Atoi(m.pid)
	if err != nil {
		return false
	}
	end := time.Now().Add(finishWait)
	for waited := false; ; waited = true {
		st, found := proc.ReadStat(pid)
		if !found || st.Zombie() || st.Start != m.start {
			return waited
		}
		if time.Now().After(end) {
			return true
		}
		time.Sleep(time.Millisecond)
	}
}

// ptyShell picks the pid and start time from exit_code.pty's line when it
// is "run PID START" as bg_live's pattern 'run '[0-9]*' '[0-9]* takes it.
func ptyShell(line string) (pid, start string, ok bool) {
	rest, ok := strings.CutPrefix(line, "run ")
	if !ok || rest == "" || !isDigit(rest[0]) {
		return "", "", false
	}
	for i := 1; i+1 < len(rest); i++ {
		if rest[i] == ' ' && isDigit(rest[i+1]) {
			pid, start, _ = strings.Cut(rest, " ")
			return pid, start, true
		}
	}
	return "", "", false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// leftovers is bg_leftovers: record, in a file leftovers holding 0, the
// ended jobs live found without processes once a second scan, made after
// the first had ended, also finds none (two more for those whose scan was
// made before they were seen ended): not into a job whose removal has
// begun (its meta.json gone), and taken back when one began meanwhile.
func (l *procLook) leftovers() bool {
	if len(l.lun1)+len(l.lun2) == 0 {
		return true
	}
	l.rescan = true
	if !l.scan() {
		return false
	}
	rec, ok := l.none(l.lun1)
	if !ok {
		return false
	}
	z, ok := l.none(l.lun2)
	if !ok {
		return false
	}
	if len(z) > 0 {
		if !l.scan() {
			return false
		}
		if z, ok = l.none(z); !ok {
			return false
		}
		rec = append(rec, z...)
	}
	for _, dir := range rec {
		mfile := filepath.Join(dir, "meta.json")
		if _, err := os.Stat(mfile); err != nil {
			continue
		}
		tmp := filepath.Join(dir, "leftovers.tmp"+strconv.Itoa(l.self))
		// Mode 0600 whatever this process's umask, as the script's under
		// its umask 077 (writePrivate, told every bit is masked).
		if writePrivate(tmp, string(jobdir.EncodeLeftovers()), 0o777) != nil || os.Rename(tmp, filepath.Join(dir, "leftovers")) != nil {
			os.Remove(tmp)
		}
		noteEnded(dir)
		if _, err := os.Stat(mfile); err != nil {
			os.Remove(filepath.Join(dir, "leftovers"))
		}
	}
	l.lun1, l.lun2, l.rescan = nil, nil, false
	return true
}

// noteEnded is bg_leftovers' record of the end's time: ended_at, from
// exit_code's mtime, where the wrapper did not write it, so that later
// script looks (over SSH, in a container) start no date for the job.
func noteEnded(dir string) {
	name := filepath.Join(dir, jobdir.EndedFile)
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	_, at, whole, _ := exitLine(dir)
	if !whole {
		return
	}
	tmp := name + ".tmp"
	if writePrivate(tmp, string(jobdir.EncodeEndedAt(at)), 0o777) != nil || os.Rename(tmp, name) != nil {
		os.Remove(tmp)
	}
}

// none is bg_lnone: those of dirs that live finds without processes, and
// with no blank process (bg_lblank) that may be theirs.
func (l *procLook) none(dirs []string) ([]string, bool) {
	var z []string
	for _, dir := range dirs {
		n, ok := l.live(dir)
		if !ok {
			return nil, false
		}
		if n > 0 {
			continue
		}
		blank, ok := l.blank(dir)
		if !ok {
			return nil, false
		}
		if !blank {
			z = append(z, dir)
		}
	}
	return z, true
}

// blank is bg_lblank for the job in dir: a process of blanks, this
// user's and still there, started since the job (any, when its start is
// not a number), may be one of its processes caught in an exec, whose
// environment the kernel shows only once the exec has laid it out.
func (l *procLook) blank(dir string) (bool, bool) {
	if len(l.blanks) == 0 {
		return false, true
	}
	m, ok := readMeta(dir)
	if !ok {
		return false, false
	}
	start, numeric, ok := metaStart(m)
	if !ok {
		return false, false
	}
	for _, p := range l.blanks {
		if numeric && p.start < start {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+strconv.Itoa(p.pid), &st) == nil && int(st.Uid) == os.Geteuid() {
			return true, true
		}
	}
	return false, true
}

// meta is what bg_meta reads of a job's meta.json: its first line, and
// bg_pick's fields (picked), the wrapper's pid, start time and boot id.
type meta struct {
	line             string
	picked           bool
	pid, start, boot string
}

// readMeta is bg_meta: a meta.json that is not there, or not a regular
// file, is not picked; not ok for one read otherwise than the shell would
// read it (over 8 KiB: head(1)'s, or none).
func readMeta(dir string) (meta, bool) {
	mfile := filepath.Join(dir, "meta.json")
	fi, err := os.Lstat(mfile)
	if err != nil {
		if os.IsNotExist(err) {
			return meta{}, true
		}
		return meta{}, false
	}
	// A link is the script's (find(1) sizes the link, the read follows it).
	if !fi.Mode().IsRegular() || fi.Size() > 8192 {
		return meta{}, false
	}
	line, ok := firstLine(mfile)
	if !ok {
		// Removed since the look above: as if not there.
		if _, err := os.Stat(mfile); os.IsNotExist(err) {
			return meta{}, true
		}
		return meta{}, false
	}
	// Another job's meta.json is not picked (bg_meta).
	if !strings.Contains(line, `"id":"`+filepath.Base(dir)+`"`) {
		return meta{line: line}, true
	}
	m := pickMeta(line)
	// A pid with a leading zero: the shell compares it as a string and
	// as a number, and names no file by it.
	return m, !m.picked || m.pid[0] != '0'
}
