package bgjob

import (
	"io"
	"slices"

	"github.com/bgjob/bgjob/shellgen"
)

// A reader that got to an offset of a log keeps the mark of the log there:
// the bytes just before it (up to shellgen.MarkLen) as it read them. A log
// truncated (logrotate's copytruncate) and grown again past that offset
// before the reader looks is as long as a log that only grew: its size
// cannot tell, its bytes can. Before reading on from its offset a reader
// checks that the log still holds its mark there (jobdir.MarkMoved); where it
// does not, all the log holds is new, and the read starts again at 0 and
// says so, as the scripts do (bg_markof, bg_moved).

// logMark is the mark of a log at end: its n bytes just before end, the
// last n of b (an array: a LogRange stays comparable).
type logMark struct {
	end int64
	n   int
	b   [shellgen.MarkLen]byte
}

// add takes in the bytes p of the log, read at from: the mark moves to
// their end, with the bytes before them it had when they follow on.
func (m *logMark) add(from int64, p []byte) {
	if len(p) == 0 {
		return
	}
	var b []byte
	if from == m.end {
		b = m.bytes()
	}
	b = append(b[:len(b):len(b)], p[max(len(p)-shellgen.MarkLen, 0):]...)
	b = b[max(len(b)-shellgen.MarkLen, 0):]
	m.end, m.n = from+int64(len(p)), len(b)
	copy(m.b[shellgen.MarkLen-len(b):], b)
}

// bytes is m's bytes.
func (m *logMark) bytes() []byte {
	return m.b[shellgen.MarkLen-m.n:]
}

// at is the mark of the log at off, as far as m holds it: its bytes before
// off that m has (none where it has none of them).
func (m logMark) at(off int64) []byte {
	if off > m.end || off <= m.end-int64(m.n) {
		return nil
	}
	b := m.bytes()
	return slices.Clone(b[:int64(len(b))-(m.end-off)])
}

// markWriter writes to w the bytes of a log read from at, and keeps the
// mark of where they reach.
type markWriter struct {
	w  io.Writer
	m  *logMark
	at int64
}

func (mw *markWriter) Write(p []byte) (int, error) {
	n, err := mw.w.Write(p)
	mw.m.add(mw.at, p[:n])
	mw.at += int64(n)
	return n, err
}

// tailKeep is how many of the last bytes delivered to a reader a read with
// a cursor keeps: as many as a pipe holds unread (up to Linux's
// pipe-max-size, 1 MiB, that an unprivileged writer may set), and a mark.
// Wherever the reader got to among them, the cursor gets the mark there.
const tailKeep = 1<<20 + shellgen.MarkLen

// logTail is the last bytes of a log delivered to a reader, up to end (at
// most 2*keep, at least keep of them once that many came; keep 0 is
// tailKeep). A reader whose unread bytes are not told keeps a mark's.
type logTail struct {
	end  int64
	b    []byte
	keep int
}

// add takes in the bytes p of the log, delivered from from: they follow
// on those it holds, or start it again.
func (t *logTail) add(from int64, p []byte) {
	if from != t.end {
		t.b = t.b[:0]
	}
	t.b = append(t.b, p...)
	t.end = from + int64(len(p))
	keep := t.keep
	if keep == 0 {
		keep = tailKeep
	}
	if len(t.b) > 2*keep {
		t.b = append(t.b[:0], t.b[len(t.b)-keep:]...)
	}
}

// at is the mark of the log at off, as far as t holds it: its bytes before
// off that t has, the last shellgen.MarkLen (none where it has none).
func (t *logTail) at(off int64) []byte {
	if off > t.end || off <= t.end-int64(len(t.b)) {
		return nil
	}
	i := int64(len(t.b)) - (t.end - off)
	return slices.Clone(t.b[max(i-shellgen.MarkLen, 0):i])
}
