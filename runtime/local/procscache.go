package local

import (
	"os"
	"strconv"
	"sync"
)

// procCache is what a Runtime remembers of the host's processes from one
// look to the next, so that a process alive at both is not read again: its
// start time, which never changes, and, for one whose environment carries
// no job id, that verdict and what it was reached from. A look made by a
// Runtime that has looked before (warm: the MCP server, top, a follow)
// reads of a process it knows only its process group (getpgid) and the
// identity of its /proc/PID directory; the stat line only of the
// processes it does not know, of the members of a group it counts, and of
// those whose environment it would read, which it reads only where the
// verdict no longer holds. A one-shot call looks once: its look is made
// as it was (every stat line, no identity), and remembers nothing.
//
// Nothing remembered can hide a process: a process is known by its pid
// and the inode number and change time of /proc/PID, which the kernel
// makes anew for each process (never for the same process twice, and a
// pid handed on is a new process); and a verdict holds only while the
// environment block's bounds and the process's count of page faults are
// those it was reached at. An exec lays out a new block, faulting its
// pages in (the count grows, whether or not the block lands where the
// old one was, as it does with address randomization off), and a process
// that writes into its own block in place is one that set out to be
// seen. A verdict that a process carries an id is not kept: it is read
// again.
type procCache struct {
	mu sync.Mutex
	// looks counts the looks made; the first is cold.
	looks int
	// procs are the processes the last look found, by pid; never written
	// once published, read by any look at once.
	procs map[int]cachedProc
	// checked: ns is known; ns: /proc is of this process's pid namespace
	// (getpgid takes pids of the caller's).
	checked, ns bool
	// ended are the records of ended jobs, by directory (endedcache.go).
	ended map[string]endedObs
}

// cachedProc is what is remembered of a process.
type cachedProc struct {
	// ino and ctime identify its /proc/PID directory.
	ino   uint64
	ctime int64
	start int64
	// clean, with env, says that the environment it had at env carries
	// no job id.
	clean bool
	env   envKey
}

// envKey is what a verdict on an environment holds at: the bounds of the
// environment block (fields 50 and 51 of the stat line, Linux 3.5 and
// later; 0 where the kernel hides them: another user's process, one not
// dumpable, a kernel thread) and the page faults made so far (minor and
// major, fields 10 and 12).
type envKey struct{ start, end, faults uint64 }

// valid says whether k can hold a verdict: the kernel showed the bounds.
func (k envKey) valid() bool { return k.start != 0 && k.end > k.start }

// snapshot returns what looks remembered, and whether this look is warm:
// made by a Runtime that has looked before, with /proc of its own pid
// namespace.
func (c *procCache) snapshot() (map[int]cachedProc, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.looks == 0 {
		return nil, false
	}
	if !c.checked {
		self, err := os.Readlink("/proc/self")
		c.checked, c.ns = true, err == nil && self == strconv.Itoa(os.Getpid())
	}
	return c.procs, c.ns
}

// warm reports whether a look has been made before: the Runtime is one
// that looks again.
func (c *procCache) warm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.looks > 0
}

// remember counts a look, and keeps procs unless nil (a cold look has no
// identities to keep).
func (c *procCache) remember(procs map[int]cachedProc) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.looks++
	if procs != nil {
		c.procs = procs
	}
}

// endedObs is what is kept of an ended job: its records before and after
// the P record, and meta.json's line, from which the P record is made.
type endedObs struct {
	ino        uint64
	ctime      int64
	head, tail string
	meta       string
	picked     bool
}
