// Package proc reads what bgjob needs of the processes of the machine it
// runs on from /proc: a process's stat line (its state, group and start
// time), the boot id and the pid namespace, its files opened outside Go's
// poller. Where there is no
// /proc a process is not found and the boot id is "".
package proc

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
)

// Start returns field 22 of /proc/PID/stat (the start time in clock
// ticks since boot) and whether the process is a zombie; found is false
// when there is no such process.
func Start(pid int) (start string, zombie, found bool) {
	st, found := ReadStat(pid)
	return st.Start, st.Zombie(), found
}

// ReadStat returns the fields of /proc/PID/stat bgjob reads; found is
// false when there is no such process (or no /proc).
func ReadStat(pid int) (st Stat, found bool) {
	f, err := Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return Stat{}, false
	}
	return ParseStat(b)
}

// Stat holds the fields of a /proc/PID/stat line that bgjob reads, as
// the scripts split it (bg_proc, bg_scan): what follows the last ") " (the
// command name, field 2, is in parentheses and may hold both) split at
// blanks.
type Stat struct {
	PID   string // field 1
	State string // field 3
	PGID  string // field 5
	Start string // field 22: clock ticks since boot
}

// Zombie says whether the process has exited and awaits its parent.
func (st Stat) Zombie() bool { return st.State == "Z" || st.State == "X" }

// ParseStat splits the line b of a /proc/PID/stat; not ok when it is not
// one.
func ParseStat(b []byte) (Stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, ' ')
	if i < 0 || j < 0 {
		return Stat{}, false
	}
	// f[0] is field 3 (the state), so field 22 is f[19].
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return Stat{}, false
	}
	return Stat{PID: string(b[:j]), State: string(f[0]), PGID: string(f[2]), Start: string(f[19])}, true
}

// Boot returns the boot id of this machine, "" where it has none.
func Boot() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// PIDNamespace names the pid namespace this process runs in, "" where it
// cannot be told.
func PIDNamespace() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
}
