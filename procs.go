package bgjob

import (
	"bytes"
	"io"
	"strconv"
)

// procStart returns field 22 of /proc/PID/stat (the start time in clock
// ticks since boot) and whether the process is a zombie; found is false
// when there is no such process.
func procStart(pid int) (start string, zombie, found bool) {
	st, found := procStat(pid)
	return st.start, st.zombie(), found
}

// procStat returns the fields of /proc/PID/stat bgjob reads; found is
// false when there is no such process (or no /proc).
func procStat(pid int) (st statFields, found bool) {
	f, err := openRead("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return statFields{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return statFields{}, false
	}
	return parseStat(b)
}

// statFields are the fields of a /proc/PID/stat line that bgjob reads, as
// the scripts split it (bg_proc, bg_scan): what follows the last ") " (the
// command name, field 2, is in parentheses and may hold both) split at
// blanks.
type statFields struct {
	pid   string // field 1
	state string // field 3
	pgid  string // field 5
	start string // field 22: clock ticks since boot
}

// zombie says whether the process has exited and awaits its parent.
func (st statFields) zombie() bool { return st.state == "Z" || st.state == "X" }

// parseStat splits the line b of a /proc/PID/stat; not ok when it is not
// one.
func parseStat(b []byte) (statFields, bool) {
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, ' ')
	if i < 0 || j < 0 {
		return statFields{}, false
	}
	// f[0] is field 3 (the state), so field 22 is f[19].
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return statFields{}, false
	}
	return statFields{pid: string(b[:j]), state: string(f[0]), pgid: string(f[2]), start: string(f[19])}, true
}
