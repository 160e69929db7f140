package bgjob

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bgjob/bgjob/internal/shellgen"
	"github.com/bgjob/bgjob/jobdir"
)

// nativeStatus returns, for a client whose job files are on this machine
// (a Watcher's), what status.sh would print for refs, made in Go, when
// every ref is a job that needs nothing but its files: an id whose
// directory holds a meta.json of at most 8 KiB (bg_metaline reads one
// larger otherwise), an exit_code, and a leftovers record of 0 (bg_live
// then takes it at its word and does not scan). Any other case, an odd
// byte in a file, or a root the script would refuse, is the script's
// (ok false): it stays the specification, and this is only the common
// case of it, compared byte for byte with it (TestNativeStatusIsTheScripts,
// and every status of the e2e tests under BGJOB_NATIVE_CHECK).
func (c *Client) nativeStatus(refs []string) (out string, ok bool) {
	begin, ok := c.nativeBegin()
	if !ok || len(refs) == 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString(begin)
	for _, ref := range refs {
		if !jobdir.IsID(ref) {
			return "", false
		}
		obs, ok := nativeObs(filepath.Join(c.root, c.workspace, ref))
		if !ok {
			return "", false
		}
		b.WriteString(obs)
	}
	b.WriteString(nativeEnd)
	return b.String(), true
}

// nativeList returns, as nativeStatus, what list.sh would print for q,
// made in Go, when q lists one workspace (not every workspace, not the
// owned jobs) and every job it prints has ended with its leftovers
// recorded: the directory names that are ids, newest first, before
// q.Before, at most q.Max, then an N record if more are left.
func (c *Client) nativeList(q shellgen.List) (string, bool) {
	if q.AllWorkspaces || q.Owned {
		return "", false
	}
	begin, ok := c.nativeBegin()
	if !ok {
		return "", false
	}
	ws := filepath.Join(c.root, c.workspace)
	ents, err := os.ReadDir(ws)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(begin)
	n := 0
	for i := len(ents) - 1; i >= 0; i-- {
		id := ents[i].Name()
		if !jobdir.IsID(id) || q.Before != "" && id >= q.Before {
			continue
		}
		dir := filepath.Join(ws, id)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if q.Max > 0 && n >= q.Max {
			b.WriteString("N\tmore\n")
			break
		}
		obs, ok := nativeObs(dir)
		if !ok {
			return "", false
		}
		b.WriteString(obs)
		n++
	}
	b.WriteString(nativeEnd)
	return b.String(), true
}

// nativeEnd is the end marker every script prints last (bg_end).
const nativeEnd = "\n@@bgjob-end@@\n"

// nativeBegin returns what every script prints first (begin.sh: the begin
// marker, the B record of the boot id) where a read may be made in Go: on
// this machine (a Watcher's files), with /proc, under a root and a
// workspace that are directories of this user, not links (bg_readroot
// refuses links and a root of another user; the script says how).
func (c *Client) nativeBegin() (string, bool) {
	if _, watch := c.rt.(Watcher); !watch || c.root == "" {
		return "", false
	}
	if !ownDir(c.root) || !ownDir(filepath.Join(c.root, c.workspace)) {
		return "", false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return "", false
	}
	boot, ok := firstLine("/proc/sys/kernel/random/boot_id")
	if !ok {
		return "", false
	}
	return "\n@@bgjob-begin@@\nB\t" + boot + "\n", true
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

// nativeObs returns bg_obs's records of the ended job in dir whose
// leftovers are recorded: bg_obsrec's, then the L record bg_live prints
// for it without a scan (0, proc); not ok for any other job.
func nativeObs(dir string) (string, bool) {
	obs, _, ok := nativeObsRec(dir)
	if !ok {
		return "", false
	}
	if left, ok := firstLine(filepath.Join(dir, "leftovers")); !ok || left != "0" {
		return "", false
	}
	return obs + "L\t0\tproc\n", true
}

// nativeObsRec returns bg_obsrec's records (J, M, P, X, T, S, Y, Q, U) of
// the ended job in dir (its exit_code is there), and its meta.json line,
// or not ok for a job that is not such or a file read otherwise than the
// shell would read it.
func nativeObsRec(dir string) (recs, meta string, ok bool) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", "", false
	}
	mfile := filepath.Join(dir, "meta.json")
	if fi, err := os.Lstat(mfile); err != nil || !fi.Mode().IsRegular() || fi.Size() > 8192 {
		return "", "", false
	}
	line, ok := firstLine(mfile)
	if !ok || line == "" {
		return "", "", false
	}
	code, ok := firstLine(filepath.Join(dir, "exit_code"))
	if !ok {
		return "", "", false
	}
	var rec strings.Builder
	rec.WriteString("J\t" + escRecord(dir) + "\nM\t" + line + "\n")
	if w, ok := pickPID(line); ok {
		// What bg_proc leaves in bg_s: the start time, "" for a process
		// that is not there or is a zombie. The shell names the file by
		// the digits as they are: a pid with a leading zero (no file) or
		// too large for an int is the script's.
		pid, err := strconv.Atoi(w)
		if err != nil || w[0] == '0' {
			return "", "", false
		}
		start, zombie, found := procStart(pid)
		if !found || zombie {
			start = ""
		}
		rec.WriteString("P\t" + start + "\n")
	}
	rec.WriteString("X\t" + code + "\n")
	for _, f := range []struct{ file, tag string }{
		{"ended_at", "T\t"}, {"stop", "S\t"}, {"stdout.dropped", "Y\tstdout\t"},
		{"stderr.dropped", "Y\tstderr\t"}, {"queued", "Q\t"}, {"not_run", "U\t"},
	} {
		name := filepath.Join(dir, f.file)
		if _, err := os.Stat(name); err != nil {
			if !os.IsNotExist(err) {
				return "", "", false
			}
			continue
		}
		l, ok := firstLine(name)
		if !ok {
			return "", "", false
		}
		rec.WriteString(f.tag + l + "\n")
	}
	// Read last, as the script's check: a removal takes meta.json first.
	if _, err := os.Stat(mfile); err != nil {
		return "", "", false
	}
	return rec.String(), line, true
}

// firstLine is what `IFS= read -r bg_l <file` leaves in bg_l: the file's
// first line, without its newline. A file that is not there, cannot be
// read, or holds a byte the shells read each their own way (NUL), or a
// line too long to be sure of, is not ok.
func firstLine(name string) (string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 8193)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		// An empty file reads as "".
		if fi, serr := f.Stat(); serr == nil && fi.Size() == 0 {
			return "", true
		}
		return "", false
	}
	line, _, found := bytes.Cut(buf[:n], []byte("\n"))
	if !found && n == len(buf) || bytes.IndexByte(line, 0) >= 0 {
		return "", false
	}
	return string(line), true
}

// pickPID is bg_pick's pid: meta.json's line split at commas as the shell
// splits it (a last empty field is no field), the fourth field from the
// end, "pid":DIGITS, when there are four.
func pickPID(line string) (string, bool) {
	fields := strings.Split(line, ",")
	if fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) < 4 {
		return "", false
	}
	w, ok := strings.CutPrefix(fields[len(fields)-4], `"pid":`)
	if !ok || w == "" || strings.Trim(w, "0123456789") != "" {
		return "", false
	}
	return w, true
}

// escRecord is bg_esc: a backslash, newline or tab in s written as \\, \n
// or \t, as a record's field.
func escRecord(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(s)
}
