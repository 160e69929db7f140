package local

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat is what a scan reads of a stat line.
type procStat struct {
	pid    int
	zombie bool
	pgid   string
	start  int64
	env    envKey
}

// parseProcStat reads the stat line b (without its newline) as bg_scan's
// awk splits it: the pid before the first blank, and, after the last ")"
// (the command name, field 2, is in parentheses and may hold both), the
// state, the group and the start time (fields 3, 5 and 22); and the
// fields of envKey where the line has them. Not ok for a line the script
// would read otherwise (a pid or start time that is not a plain number).
// pgids interns the groups' names: most processes share a few.
func parseProcStat(b []byte, pgids map[string]string) (procStat, bool) {
	var st procStat
	j := bytes.IndexByte(b, ' ')
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || j < 0 {
		return st, false
	}
	pid, ok := decimal(b[:j])
	if !ok || pid > 1<<31 || j > 1 && b[0] == '0' {
		return st, false
	}
	// f[0] is field 3 (the state), so field N is f[N-3].
	var f [49][]byte
	n := splitFields(b[i+1:], f[:])
	if n < 20 {
		return st, false
	}
	start, ok := decimal(f[19])
	if !ok || start > 1<<62 {
		return st, false
	}
	st.pid, st.start = int(pid), int64(start)
	st.zombie = len(f[0]) == 1 && (f[0][0] == 'Z' || f[0][0] == 'X')
	if st.pgid, ok = pgids[string(f[2])]; !ok {
		st.pgid = string(f[2])
		pgids[st.pgid] = st.pgid
	}
	minflt, _ := decimal(f[7])
	majflt, _ := decimal(f[9])
	st.env.faults = minflt + majflt
	if n > 48 {
		st.env.start, _ = decimal(f[47])
		st.env.end, _ = decimal(f[48])
	}
	return st, true
}

// splitFields puts the fields of b, split at runs of blanks as awk splits
// them, into f, as many as fit, and returns how many b has.
func splitFields(b []byte, f [][]byte) int {
	n := 0
	for {
		for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
			b = b[1:]
		}
		if len(b) == 0 {
			return n
		}
		e := bytes.IndexAny(b, " \t")
		if e < 0 {
			e = len(b)
		}
		if n < len(f) {
			f[n] = b[:e]
		}
		n++
		b = b[e:]
	}
}

// decimal reads b, digits only, as a number; not ok for anything else or
// more than 19 digits.
func decimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// readProcStat reads and parses the stat file of the process name (its
// pid) under the /proc descriptor procFD into buf: found false for a
// process gone, not ok for a line the script would split otherwise.
func readProcStat(procFD int, name string, buf []byte, path *[]byte, pgids map[string]string) (st procStat, found, ok bool) {
	*path = append(append((*path)[:0], name...), "/stat"...)
	b, there := readProcAt(procFD, string(*path), buf)
	if !there || len(b) == 0 {
		return st, false, true
	}
	// One line, as grep prints it and awk reads it: a command name
	// holding a newline would make two.
	if bytes.IndexByte(b, '\n') != len(b)-1 {
		return st, false, false
	}
	st, ok = parseProcStat(b[:len(b)-1], pgids)
	return st, ok, ok
}

// warmScan is statScan for a warm look: a process known from the last
// look (by pid and the identity of /proc/PID, read first, so that what is
// read after it is never taken for another process's) is not read but
// for its group; any other's stat line is read. The processes are
// returned in the order of pids, as next entries for the cache.
func warmScan(procFD, euid int, pids []string, known map[int]cachedProc) (found []scanProc, next []cachedPID, gone, ok bool) {
	var (
		buf   [1024]byte
		path  []byte
		pgids = map[string]string{}
		ids   = map[int]string{}
	)
	found = make([]scanProc, 0, len(pids))
	next = make([]cachedPID, 0, len(pids))
	for _, name := range pids {
		var fi unix.Stat_t
		if unix.Fstatat(procFD, name, &fi, unix.AT_SYMLINK_NOFOLLOW) != nil {
			gone = true
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		ctime := fi.Ctim.Nano()
		if c, there := known[pid]; there && c.ino == fi.Ino && c.ctime == ctime {
			pg, err := unix.Getpgid(pid)
			if err == unix.ESRCH {
				gone = true
				continue
			}
			if err == nil {
				pgid, there := ids[pg]
				if !there {
					pgid = strconv.Itoa(pg)
					ids[pg] = pgid
				}
				found = append(found, scanProc{pid: pid, start: c.start, pgid: pgid, others: int(fi.Uid) != euid})
				next = append(next, cachedPID{pid, c})
				continue
			}
		}
		st, there, ok := readProcStat(procFD, name, buf[:], &path, pgids)
		if !ok {
			return nil, nil, false, false
		}
		if !there || st.zombie {
			gone = true
			continue
		}
		found = append(found, scanProc{pid: st.pid, start: st.start, pgid: st.pgid, read: true, others: int(fi.Uid) != euid, env: st.env})
		next = append(next, cachedPID{st.pid, cachedProc{ino: fi.Ino, ctime: ctime, start: st.start}})
	}
	return found, next, gone, true
}

// cachedPID is a cache entry and its pid.
type cachedPID struct {
	pid int
	cachedProc
}
