package local

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// An ended job whose leftovers record says 0 changes no more: the records
// a look makes of it (bg_obs's, but for its wrapper's P record, which
// tells whether that pid is alive now) are those of the last look, as
// long as its directory is the one that look saw. bgjob writes every file
// of a job by creating it or renaming it into place (exit_code, the one
// file written in place, is created by that write), so any change of a
// job's files after its end moves its directory's change time; a Runtime
// that looks again (the MCP server, top, a follow) keeps the records of
// such jobs by directory, with its inode number and change time, and
// makes them anew only where those moved. A directory changed within
// endedSettle of the look is not kept: file times come from a clock that
// ticks a few milliseconds at a time, and two changes within one tick
// leave one time.
var endedSettle = 2 * time.Second

// maxEnded bounds the records kept; past it, they are dropped and kept
// again as looks make them.
const maxEnded = 20000

// dirStamp is the inode number and change time of the directory fi.
func dirStamp(fi os.FileInfo) (ino uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Ino, st.Ctim.Nano(), true
}

// endedRecs returns the records kept of the ended job in dir, with its P
// record made now, when its directory is as it was.
func (c *procCache) endedRecs(dir string) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	e, found := c.ended[dir]
	c.mu.Unlock()
	if !found {
		return "", false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	ino, ctime, ok := dirStamp(fi)
	if !ok || ino != e.ino || ctime != e.ctime {
		return "", false
	}
	p := ""
	if e.picked {
		if p, ok = procRec(e.meta); !ok {
			return "", false
		}
	}
	// Read last, as obsRec's check: a removal takes meta.json first.
	if _, err := os.Stat(dir + "/meta.json"); err != nil {
		return "", false
	}
	return e.head + p + e.tail, true
}

// keepEnded keeps obs, the records a look made of the ended job in dir
// whose leftovers record says 0, and whose meta.json line is meta, when
// its directory, looked at after them, has not changed within
// endedSettle, and the Runtime has looked before.
func (c *procCache) keepEnded(dir, obs, meta string, now time.Time) {
	// A Runtime's first look keeps nothing: a one-shot call (bgjob ls)
	// never looks again, and would pay an lstat a job for nothing.
	if c == nil || !c.warm() {
		return
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	ino, ctime, ok := dirStamp(fi)
	if !ok || now.Sub(time.Unix(0, ctime)) < endedSettle || fi.ModTime().After(now.Add(-endedSettle)) {
		return
	}
	e := endedObs{ino: ino, ctime: ctime, meta: meta}
	// The P record follows J and M, whose lines hold no raw newline.
	if i := strings.Index(obs, "\nP\t"); i >= 0 {
		j := strings.IndexByte(obs[i+1:], '\n')
		if j < 0 {
			return
		}
		e.head, e.tail, e.picked = obs[:i+1], obs[i+1+j+1:], true
	} else {
		e.tail = obs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended == nil || len(c.ended) >= maxEnded {
		c.ended = map[string]endedObs{}
	}
	c.ended[dir] = e
}
