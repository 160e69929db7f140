package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

// printJSON is the one JSON printer: snake_case keys from the jobdir
// structs, never HTML-escaped, one line when w is not a terminal (a
// program reads it) and indented on a terminal, and a trailing newline.
// Strings that are not valid UTF-8 carry U+FFFD in place of each invalid
// byte (encoding/json's rule).
func printJSON(w io.Writer, v any) error {
	return encodeJSON(w, v, "", isTerminal(w))
}

// encodeJSON writes v as printJSON does, indented when indent, each line
// after the first prefixed with prefix (to nest it in a streamed array).
func encodeJSON(w io.Writer, v any, prefix string, indent bool) error {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent(prefix, "  ")
	}
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := fileOf(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// checkedWriter is bgjob's stdout: it keeps the first write error, which
// Run reports when the verb did not fail otherwise, so that data lost on
// the way out (a full disk, > /dev/full) is a failure, never an exit
// status of 0.
type checkedWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.keep(err)
	return n, err
}

// ReadFrom lets io.Copy reach the file's own (splice, sendfile).
func (c *checkedWriter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := c.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{c.w}, r)
	}
	c.keep(err)
	return n, err
}

func (c *checkedWriter) keep(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// pardonPipe forgets a write error that says the reader went (EPIPE):
// for a follow, whose reader going is how it ends (logs -f | grep -m1).
func pardonPipe(w io.Writer) {
	if c, ok := w.(*checkedWriter); ok {
		c.mu.Lock()
		if errors.Is(c.err, syscall.EPIPE) {
			c.err = nil
		}
		c.mu.Unlock()
	}
}

// failed returns the first write error.
func (c *checkedWriter) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fileOf returns the file w writes to, if it is one.
func fileOf(w io.Writer) (*os.File, bool) {
	switch w := w.(type) {
	case *os.File:
		return w, true
	case *checkedWriter:
		return fileOf(w.w)
	}
	return nil, false
}

func statusText(j jobdir.Job) string {
	var notes []string
	if j.Reason != "" {
		notes = append(notes, j.Reason)
	}
	switch j.Status {
	case jobdir.StatusQueued:
		if id, ok := strings.CutPrefix(j.Queued, "after "); ok {
			notes = append(notes, "waits for job "+id+" to end")
		} else {
			notes = append(notes, "waits for a slot")
		}
	case jobdir.StatusNotRun:
		notes = []string{j.Error}
	}
	if j.Status.Ended() && j.LiveProcesses > 0 {
		notes = append(notes, liveText(j))
	}
	if len(notes) == 0 {
		return string(j.Status)
	}
	return string(j.Status) + " (" + strings.Join(notes, "; ") + ")"
}

// liveText says how many processes a job left running.
func liveText(j jobdir.Job) string {
	s := "1 process still running"
	if j.LiveProcesses != 1 {
		s = strconv.Itoa(j.LiveProcesses) + " processes still running"
	}
	if j.ProcessScan != "" {
		s += ", its process group only (no /proc)"
	}
	return s
}

// printJob prints one job as "key: value" lines.
func printJob(w io.Writer, j jobdir.Job) {
	tw := newColumns(w, 1)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, visible(v))
		}
	}
	row("id", j.ID)
	row("name", j.Name)
	row("host", j.Host)
	row("workspace", j.Workspace)
	row("status", statusText(j))
	if j.ExitCode != nil {
		row("exit_code", jobtext.Exit(j))
	}
	if j.PID != 0 {
		row("pid", strconv.Itoa(j.PID))
	}
	if j.LiveProcesses > 0 || j.Status.Active() {
		live := strconv.Itoa(j.LiveProcesses)
		if j.ProcessScan != "" {
			live += " (its process group only: no /proc)"
		}
		row("live_processes", live)
	}
	if j.Port != 0 {
		row("port", strconv.Itoa(j.Port))
	}
	if len(j.Ports) > 0 {
		ports := make([]string, len(j.Ports))
		for i, p := range j.Ports {
			ports[i] = p.String()
		}
		row("ports", strings.Join(ports, ", "))
	}
	if j.Owner != nil {
		host, _ := os.Hostname()
		row("owner", ownerText(j.Owner, host))
	}
	row("command", j.Command)
	row("cwd", j.Cwd)
	if j.QueuedAt != nil {
		row("queued_at", j.QueuedAt.Local().Format(time.RFC3339))
	}
	if !j.StartedAt.IsZero() {
		row("started_at", j.StartedAt.Local().Format(time.RFC3339))
	}
	if j.EndedAt != nil {
		row("ended_at", j.EndedAt.Local().Format(time.RFC3339))
	}
	if d, ok := j.Duration(time.Now()); ok {
		row("duration", jobtext.Duration(d))
	}
	row("timeout", j.Timeout)
	row("labels", labelsText(j.Labels))
	row("ulimits", ulimitsText(j.Ulimits))
	if j.MaxLogSize > 0 {
		row("max_log_size", strconv.FormatInt(j.MaxLogSize, 10))
		row("dropped", fmt.Sprintf("stdout %d bytes, stderr %d bytes", j.StdoutDropped, j.StderrDropped))
	}
	row("buffering", j.Buffering)
	if j.LogsFull {
		row("logs_full", "yes: the file system had no space left when the command ended; output may be missing")
	}
	row("error", j.Error)
	row("stdout", j.StdoutPath)
	row("stderr", j.StderrPath)
	tw.Flush()
}

// columns is a tabwriter onto w whose Flush writes what it aligned in one
// write (up to 4 KiB a write): tabwriter writes each cell and each run of
// padding apart, which made a status 50 writes.
type columns struct {
	*tabwriter.Writer
	b *bufio.Writer
}

// newColumns returns columns onto w, padding cells with at least padding
// spaces.
func newColumns(w io.Writer, padding int) *columns {
	b := bufio.NewWriter(w)
	return &columns{Writer: tabwriter.NewWriter(b, 0, 0, padding, ' ', 0), b: b}
}

// Flush writes what the columns hold.
func (c *columns) Flush() error {
	if err := c.Writer.Flush(); err != nil {
		return err
	}
	return c.b.Flush()
}

// table prints jobs one per line, in aligned columns.
type table struct {
	tw                      *columns
	withWorkspace, withHost bool
	hostname                string // this machine's, for the owner column
}

// newTable returns a table of jobs, with a WORKSPACE column when
// withWorkspace and a HOST column first when withHost.
func newTable(w io.Writer, withWorkspace, withHost bool) *table {
	t := &table{tw: newColumns(w, 2), withWorkspace: withWorkspace, withHost: withHost}
	t.hostname, _ = os.Hostname()
	t.line("HOST", "ID", "WORKSPACE", "STATUS", "EXIT", "STARTED", "DURATION", "OWNER", "NAME", "COMMAND")
	return t
}

// line prints one row: host, id, workspace, then the rest, leaving out
// the columns the table does not have.
func (t *table) line(host, id, workspace string, rest ...string) {
	var cols []string
	if t.withHost {
		cols = append(cols, host)
	}
	cols = append(cols, id)
	if t.withWorkspace {
		cols = append(cols, workspace)
	}
	fmt.Fprintln(t.tw, strings.Join(append(cols, rest...), "\t"))
}

func (t *table) row(j jobdir.Job) {
	started := "-"
	if !j.StartedAt.IsZero() {
		started = j.StartedAt.Local().Format("01-02 15:04:05")
	}
	cmd := []rune(visible(strings.Join(strings.Fields(j.Command), " ")))
	if len(cmd) > 60 {
		cmd = append(cmd[:57], []rune("...")...)
	}
	name := visible(j.Name)
	if name == "" {
		name = "-"
	}
	dur := "-"
	if d, ok := j.Duration(time.Now()); ok {
		dur = jobtext.Duration(d)
	}
	t.line(visible(j.Host), visible(j.ID), visible(j.Workspace), statusText(j), jobtext.Exit(j), started, dur, ownerText(j.Owner, t.hostname), name, string(cmd))
}

// ownerText names the process a job belongs to: "mcp:PID" for a bgjob mcp
// server of this machine (hostname), "mcp:PID@HOST" for one of another,
// ",keep" added when the job outlives it; "-" for a job without one.
func ownerText(o *jobdir.Owner, hostname string) string {
	if o == nil {
		return "-"
	}
	s := visible(o.Kind) + ":" + strconv.Itoa(o.PID)
	if o.Hostname != hostname {
		s += "@" + visible(o.Hostname)
	}
	if o.Keep {
		s += ",keep"
	}
	return s
}

func (t *table) flush() { t.tw.Flush() }

// maxDuration bounds --timeout: a longer one is a mistake (and would
// overflow the host's arithmetic).
const maxDuration = bgjob.MaxTimeout

// graceFlag checks a --grace value (0: KILL at once, as for the library).
func graceFlag(g time.Duration) (time.Duration, error) {
	switch {
	case g < 0:
		return 0, usageError("--grace must not be negative")
	case g > 24*time.Hour:
		return 0, usageError("--grace %s is longer than 24h", g)
	}
	return g, nil
}

// visible returns s for a terminal: control characters (C0, DEL, C1) and
// invalid UTF-8 are shown escaped, \x1b, \n, \t or \xNN, as ps does
// with ?, so that a command, name or path cannot move the cursor or
// retitle the terminal. --json output stays exact.
func visible(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n <= 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
