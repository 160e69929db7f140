package local

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// A read with a reader's cursor (Logs.New) is made in Go as logs.sh makes
// it in mode new: under the cursor's lock, which the scripts take with
// flock(1) on the same file (cursor-READER.lock), the earlier read's
// commit (Logs.CommitJob), then from each stream's cursor ("OFFSET MARK")
// to the log's end, a log found cut since the cursor read from its start
// (a t record, the cursor back to 0), then an A record, after which the
// reader's reports on stdin ("STREAM OFFSET MARK", how far the bytes
// reached their reader) move the cursor, never back, until stdin ends.
// Only where this machine has flock(1): without it the scripts lock with a
// directory, which a lock taken here would not exclude.

const (
	// cursorBusy is how long a read waits for a cursor another reader
	// holds before it says so (bg_busylock: 5 s by the host's clock).
	cursorBusy = 5 * time.Second
	// cursorRetry is the pause between two tries of a busy cursor's lock
	// (bg_nap's default).
	cursorRetry = 100 * time.Millisecond
	// reportsGrace bounds how long a read whose reader has gone waits for
	// the reader's last reports (the client ends them at once).
	reportsGrace = 5 * time.Second
)

// hasFlock says whether this machine has flock(1), as the scripts look
// for it (command -v flock).
var hasFlock = sync.OnceValue(func() bool {
	_, err := exec.LookPath("flock")
	return err == nil
})

// newRead answers a read with a cursor of the job j in dir whose logs
// files are open: it returns the records after the job's (head) as the
// script prints them, and reads stdin's reports; not ok where the script
// must make it.
func newRead(ctx context.Context, q shellgen.Logs, j logJob, files []*os.File, stdin io.Reader, head string) (r io.Reader, finished <-chan struct{}, ok bool) {
	if !hasFlock() {
		return nil, nil, false
	}
	// A dropped count the script reads otherwise is the script's, found
	// now, before anything is said.
	for _, st := range q.Streams {
		if _, err := droppedOf(j.dir, st); err != nil {
			return nil, nil, false
		}
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := cursorRead{q: q, j: j, files: files}
		pw.CloseWithError(c.write(ctx, pw, stdin, head))
	}()
	return pr, done, true
}

// cursorRead is one read with a reader's cursor.
type cursorRead struct {
	q     shellgen.Logs
	j     logJob
	files []*os.File
}

// cursor is the name of the cursor file of stream.
func (c *cursorRead) cursor(stream string) string {
	return filepath.Join(c.j.dir, "cursor-"+c.q.Reader+"."+stream)
}

// write writes the read's records to w: head, the lock taken (or an E
// record), the ranges, A, then, once stdin has ended and the reports are
// in the cursor, an E record where one could not be written, and the end.
func (c *cursorRead) write(ctx context.Context, w io.Writer, stdin io.Reader, head string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head)
	lockName := filepath.Join(c.j.dir, "cursor-"+c.q.Reader+".lock")
	lock := flock.New(lockName, flock.SetFlag(os.O_CREATE|os.O_WRONLY|os.O_APPEND))
	lctx, cancel := context.WithTimeout(ctx, cursorBusy)
	// An error is one opening the lock file: the io record says so.
	locked, _ := lock.TryLockContext(lctx, cursorRetry)
	waited := lctx.Err() != nil
	cancel()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case locked:
	case waited:
		return c.refuse(bw, "cursorbusy", "the read cursor is busy: another reader holds "+lockName)
	default:
		// The lock file could not be opened (or locked): bg_cursorlock's
		// io record.
		return c.refuse(bw, "io", "cannot open the cursor lock "+lockName+" (is the file system read-only or full?)")
	}
	defer lock.Unlock()
	if filepath.Base(c.j.dir) == c.q.CommitJob {
		for _, st := range c.q.Streams {
			if off, ok := c.q.Commit[st]; ok && off >= 0 {
				commitCursor(c.cursor(st), off, hex.EncodeToString(c.q.CommitMarks[st]))
			}
		}
	}
	reports := make(chan bool, 1)
	go func() { reports <- c.commitReports(stdin) }()
	if err := c.writeRanges(bw); err != nil {
		// The reader has gone (its pipe closed) or a log failed: the
		// reports of what reached it still move the cursor, as the
		// script's committer, a process of its own, moves it.
		select {
		case <-reports:
		case <-time.After(reportsGrace):
		}
		return err
	}
	bw.WriteString("A\tsent\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	if !<-reports {
		fmt.Fprintf(bw, "E\tio\t%s\n", escRecord("cannot save the read cursor in "+c.j.dir+" (is the disk full?): the next read with --new sends this output again"))
	}
	bw.WriteString(nativeEnd)
	return bw.Flush()
}

// refuse writes an E record of kind and msg and the end (bg_err).
func (c *cursorRead) refuse(w *bufio.Writer, kind, msg string) error {
	fmt.Fprintf(w, "E\t%s\t%s\n", kind, escRecord(msg))
	w.WriteString(nativeEnd)
	return w.Flush()
}

// writeRanges writes, for each stream, its range from the cursor, as
// logs.sh's mode new makes it.
func (c *cursorRead) writeRanges(w *bufio.Writer) error {
	_, n, zero := c.q.Range()
	left := max(c.q.MaxBytes, 0)
	for i, st := range c.q.Streams {
		f, size := c.files[i], c.j.sizes[i]
		if !c.j.ended {
			// Read now, under the lock, as logs.sh reads it: a reader
			// that held the lock meanwhile may have moved the cursor
			// past the size the read began with.
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			size = fi.Size()
		}
		dr, err := droppedOf(c.j.dir, st)
		if err != nil {
			return err
		}
		from, mark := readCursor(c.cursor(st))
		rd := logRead{stream: st, f: f, live: c.j.live, size: size}
		if from > size || size > from && cursorMoved(f, size, from, mark, dr) {
			// Cut since (truncated to free the disk, made anew): all it
			// holds is new, and the cursor goes back to its start, under
			// the lock, which a commit would not do.
			rd.rewound = true
			from = 0
			writeCursor(c.cursor(st), "0")
		}
		ask := logAsk{mode: "new", n: n, zero: zero, offset: from, live: c.j.live, tty: c.j.tty, capped: c.q.MaxBytes > 0}
		if rd.span, err = logRange(f, size, dr, ask, &left); err != nil {
			return err
		}
		if err := writeRead(w, rd, c.j.dir); err != nil {
			return err
		}
	}
	return nil
}

// readCursor reads the cursor file name: its offset and its mark, as
// bg_line reads "OFFSET MARK" (0 and none where there is no file; a mark
// of other bytes than hex digits is none).
func readCursor(name string) (int64, string) {
	line, there, ok := lineIfThere(name)
	if !there || !ok {
		return 0, ""
	}
	return readCursorLine(line)
}

// readCursorLine splits a cursor's line as readCursor reads it.
func readCursorLine(line string) (int64, string) {
	digits := line[:len(line)-len(strings.TrimLeft(line, "0123456789"))]
	mark := strings.TrimPrefix(line[len(digits):], " ")
	if strings.Trim(mark, "0123456789abcdef") != "" {
		mark = ""
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		off = 0
	}
	return off, mark
}

// cursorMoved is bg_moved with the cursor's mark, in hex: the log f, of
// size bytes (more than from), no longer holds the mark's bytes before
// from. A mark of an odd count of digits can match no bytes.
func cursorMoved(f *os.File, size, from int64, mark string, dr int64) bool {
	if mark == "" || from <= dr {
		return false
	}
	b, err := hex.DecodeString(mark)
	if err != nil {
		return true
	}
	return jobdir.MarkMoved(f, size, from, b, dr)
}

// commitReports moves the cursors over the reports that come on stdin,
// lines "STREAM OFFSET [MARK]", until it ends, as logs.sh's committer
// does: that one keeps each stream's last report and writes the cursors
// at every eighth report and when stdin ends, and those are the cursors
// left here too. But the committer is a process of its own, which
// outlives a reader that dies, while this one dies with it: so the
// cursors are also written as the reports come, from the last one read
// whenever no other waits (a reader killed mid-read gets again only what
// its last report did not cover). It says whether the last cursors
// written were.
func (c *cursorRead) commitReports(stdin io.Reader) bool {
	if stdin == nil {
		return true
	}
	// base is each stream's cursor as the committer last wrote it (read
	// from its file at first: a rewind may have written it since the
	// read began), last its last report, written the line last written.
	base, last := map[string]cursorPos{}, map[string]cursorPos{}
	written := map[string]string{}
	// next is the cursor of stream st after its last report, from base,
	// as a line; moved false where it does not move the cursor.
	next := func(st string) (line string, moved bool) {
		r, there := last[st]
		if !there {
			return "", false
		}
		b, read := base[st]
		if !read {
			b.off, b.mark = readCursor(c.cursor(st))
			base[st] = b
		}
		return commitLine(b.off, b.mark, r.off, r.mark)
	}
	// write writes each stream's next cursor; batch makes it the base of
	// the next ones, as the committer's own writes are.
	write := func(batch bool) bool {
		ok := true
		for _, st := range c.q.Streams {
			line, moved := next(st)
			if !moved {
				continue
			}
			if line != written[st] {
				if !writeCursor(c.cursor(st), line) {
					ok = false
					continue
				}
				written[st] = line
			}
			if batch {
				var b cursorPos
				b.off, b.mark = readCursorLine(line)
				base[st] = b
			}
		}
		return ok
	}
	br := bufio.NewReader(stdin)
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			// A last line without its newline is not read (read -r).
			break
		}
		st, r, valid := parseReport(strings.TrimSuffix(line, "\n"))
		if !valid {
			continue
		}
		last[st] = r
		if n++; n%8 == 0 || br.Buffered() == 0 {
			write(n%8 == 0)
		}
	}
	// The committer's last write, whose status is the read's.
	return write(true)
}

// cursorPos is a cursor's offset and mark (hex), or a report's.
type cursorPos struct {
	off  int64
	mark string
}

// parseReport splits a report line as `IFS=' ' read -r st c cm` does, and
// checks it as the committer does: a stream, an offset of digits, and a
// mark of hex digits (else none).
func parseReport(line string) (stream string, r cursorPos, ok bool) {
	line = strings.Trim(line, " ")
	stream, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimLeft(rest, " ")
	off, mark, _ := strings.Cut(rest, " ")
	mark = strings.Trim(mark, " ")
	if stream != "stdout" && stream != "stderr" || off == "" || strings.Trim(off, "0123456789") != "" {
		return "", cursorPos{}, false
	}
	if strings.Trim(mark, "0123456789abcdef") != "" {
		mark = ""
	}
	n, err := strconv.ParseInt(off, 10, 64)
	if err != nil {
		return "", cursorPos{}, false
	}
	return stream, cursorPos{n, mark}, true
}

// commitCursor is bg_commit: it moves the cursor file name forward to
// off, never back, with the mark of the log there (hex). It says whether
// the cursor is as it should be.
func commitCursor(name string, off int64, mark string) bool {
	cur, old := readCursor(name)
	line, moved := commitLine(cur, old, off, mark)
	return !moved || writeCursor(name, line)
}

// commitLine is the cursor line bg_commit makes of a cursor at cur, with
// the mark old, moved to off with mark: a mark of fewer than 16 bytes that
// starts where the cursor is follows on the cursor's own (the last 16
// bytes of both). Not moved where off is not past cur.
func commitLine(cur int64, old string, off int64, mark string) (string, bool) {
	if cur >= off {
		return "", false
	}
	if mark != "" && len(mark) < 32 && cur+int64(len(mark)/2) == off {
		mark = old + mark
		for len(mark) > 32 {
			mark = mark[2:]
		}
	}
	line := strconv.FormatInt(off, 10)
	if mark != "" {
		line += " " + mark
	}
	return line, true
}

// writeCursor writes line into the cursor file name, whole or not at
// all (a .tmp file renamed over it).
func writeCursor(name, line string) bool {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(line+"\n"), 0o666); err != nil {
		os.Remove(tmp)
		return false
	}
	return os.Rename(tmp, name) == nil
}
