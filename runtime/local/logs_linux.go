package local

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
	"github.com/bgjob/bgjob/shellgen"
	"github.com/bgjob/bgjob/termtext"
)

// logs returns, for a client whose job files are on this machine,
// what logs.sh would print for q, made in Go, as a reader, and a function
// that closes the logs it reads from; for a plain read (the whole log,
// tail, head, bytes or offset, with or without a cap; no follow, no
// reader's cursor) of an ended job named by id, or by a name nativeFind
// finds, that is not a PTY job.
// Every other case is the script's (ok false), as for nativeStatus; the
// bytes are compared with the script's by TestNativeLogsIsTheScripts and,
// under BGJOB_NATIVE_CHECK, by every read of the e2e tests.
func (a answerer) logs(q shellgen.Logs) (r io.Reader, closeLogs func(), ok bool) {
	mode, n, _ := q.Range()
	if q.New || q.Follow || mode == "new" || len(q.Streams) == 0 {
		return nil, nil, false
	}
	begin, _, ok := a.nativeBegin()
	if !ok {
		return nil, nil, false
	}
	dir, ok := a.nativeFind(q.Ref)
	if !ok {
		return nil, nil, false
	}
	// An ended job's: exit_code, once there, stays.
	if _, err := os.Stat(filepath.Join(dir, "exit_code")); err != nil {
		return nil, nil, false
	}
	// A log that is not a regular file is refused (bg_nolog): the script
	// says how.
	for _, st := range q.Streams {
		if st != "stdout" && st != "stderr" {
			return nil, nil, false
		}
		if fi, err := os.Lstat(filepath.Join(dir, st+".log")); err != nil || !fi.Mode().IsRegular() {
			return nil, nil, false
		}
	}
	obs, meta, ok := nativeObsRec(dir)
	if !ok || strings.Contains(meta, `"pty":true`) {
		return nil, nil, false
	}
	var files []*os.File
	closeLogs = func() {
		for _, f := range files {
			f.Close()
		}
	}
	parts := []io.Reader{strings.NewReader(begin + obs)}
	left := max(q.MaxBytes, 0)
	for _, st := range q.Streams {
		f, err := proc.Open(filepath.Join(dir, st+".log"))
		if err != nil {
			closeLogs()
			return nil, nil, false
		}
		files = append(files, f)
		off := max(q.Offsets[st], 0)
		if mark := q.Marks[st]; mode == "offset" && len(mark) > 0 {
			// The reader's mark there, gone: truncated since (bg_moved).
			fi, err := f.Stat()
			if err != nil {
				closeLogs()
				return nil, nil, false
			}
			if jobdir.MarkMoved(f, fi.Size(), off, mark, jobdir.Dropped(dir, st)) {
				parts = append(parts, strings.NewReader(fmt.Sprintf("t\t%s\t%d\n", st, fi.Size())))
				off = 0
			}
		}
		rg, err := logRange(f, dir, st, mode, n, off, q.MaxBytes > 0, &left)
		if err != nil {
			closeLogs()
			return nil, nil, false
		}
		parts = append(parts, strings.NewReader(fmt.Sprintf("D\t%s\t%d\t%d\t0\n", st, rg.from, rg.to-rg.from)), io.NewSectionReader(f, rg.from, rg.to-rg.from))
		if rg.cut {
			parts = append(parts, strings.NewReader("Z\t"+st+"\n"))
		}
	}
	parts = append(parts, strings.NewReader(nativeEnd))
	return io.MultiReader(parts...), closeLogs, true
}

// errNotNative is a log read otherwise than logs.sh would read it: the
// read is left to the script.
var errNotNative = errors.New("left to the script")

// span is the range [from, to) of one log that a read sends, and whether
// the cap cut it.
type span struct {
	from, to int64
	cut      bool
}

// logRange is the range logs.sh sends of the log f of stream st of the
// ended job in dir (bg_live 0): mode and n as bg_mode and bg_n, offset as
// bg_from_STREAM, and, when capped, left the bytes the cap still allows
// (bg_left), which it lowers.
func logRange(f *os.File, dir, st, mode string, n, offset int64, capped bool, left *int64) (span, error) {
	fi, err := f.Stat()
	if err != nil {
		return span{}, err
	}
	sz := fi.Size()
	var dr int64
	if _, err := os.Stat(filepath.Join(dir, st+".dropped")); err == nil {
		l, ok := firstLine(filepath.Join(dir, st+".dropped"))
		if !ok || strings.Trim(l, "0123456789") != "" || len(l) > 18 || l != "" && l[0] == '0' && l != "0" {
			return span{}, errNotNative
		}
		dr = jobdir.DecodeDropped(l)
	} else if !os.IsNotExist(err) {
		return span{}, err
	}
	from, to, back := int64(0), sz, false
	switch mode {
	case "tail":
		if sz != 0 {
			if from, err = tailStart(f, sz, n); err != nil {
				return span{}, err
			}
		}
		back = true
	case "head":
		from = dr
		switch {
		case sz == dr:
			to = dr
		default:
			h, err := headLen(f, dr, n)
			if err != nil {
				return span{}, err
			}
			to = dr + h
		}
	case "bytes":
		from, back = sz-n, true
	case "offset":
		from = offset
	case "all":
	default:
		return span{}, errNotNative
	}
	from = max(from, dr)
	to = min(to, sz)
	from = min(from, to)
	cut := false
	if capped && to-from > *left {
		cut = true
		if back {
			from = to - *left
			// Start at a character: skip the continuation bytes of one
			// the cut split (of the next three).
			b, err := readAt(f, from, 3)
			if err != nil {
				return span{}, err
			}
			for _, c := range b {
				if c < 128 || c >= 192 {
					break
				}
				from++
			}
		} else {
			whole := to
			if to, err = utf8End(f, from+*left, from); err != nil {
				return span{}, err
			}
			to = max(to, from)
			if to == from && *left > 0 {
				// A cap smaller than the next character takes it whole.
				b, err := readAt(f, from, 1)
				if err != nil {
					return span{}, err
				}
				need := int64(1)
				if len(b) == 1 {
					need = seqLen(b[0])
				}
				to = min(from+need, whole)
			}
			if to > from {
				if to, err = escEnd(f, from, to, whole); err != nil {
					return span{}, err
				}
			}
		}
	}
	*left = max(*left-(to-from), 0)
	return span{from, to, cut}, nil
}

// seqLen is how many bytes the UTF-8 sequence that c starts holds, as
// logs.sh counts them: 1 for a byte that starts none (below 192, or from
// 248 up).
func seqLen(c byte) int64 {
	switch {
	case c >= 248 || c < 192:
		return 1
	case c >= 240:
		return 4
	case c >= 224:
		return 3
	}
	return 2
}

// readAt returns up to n bytes of f from off: fewer at its end.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	m, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:m], nil
}

// tailStart is bg_tailfrom: where the last n lines of the first size bytes
// of f start, as tail -n counts them (a last line without its newline is
// a line; n 0 is none).
func tailStart(f *os.File, size, n int64) (int64, error) {
	if n == 0 {
		return size, nil
	}
	var count int64
	buf := make([]byte, 64<<10)
	for pos := size; pos > 0; {
		m := min(int64(len(buf)), pos)
		pos -= m
		if _, err := f.ReadAt(buf[:m], pos); err != nil {
			return 0, err
		}
		for i := m - 1; i >= 0; i-- {
			if buf[i] != '\n' || pos+i == size-1 {
				continue
			}
			if count++; count == n {
				return pos + i + 1, nil
			}
		}
	}
	return 0, nil
}

// headLen is what `head -n n | wc -c` counts of f from byte from: the
// bytes of its first n lines, or all of it that there is.
func headLen(f *os.File, from, n int64) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	var count, total int64
	buf := make([]byte, 64<<10)
	for {
		m, err := f.ReadAt(buf, from+total)
		for i := range m {
			if buf[i] == '\n' {
				if count++; count == n {
					return total + int64(i) + 1, nil
				}
			}
		}
		total += int64(m)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// utf8End is bg_utf8end: size less an incomplete UTF-8 sequence at the end
// of the first size bytes of f, but not below from (unless from is past
// size).
func utf8End(f *os.File, size, from int64) (int64, error) {
	k := min(int64(3), size)
	if k <= 0 {
		return size, nil
	}
	b, err := readAt(f, size-k, k)
	if err != nil {
		return 0, err
	}
	to := size
	for have := int64(1); len(b) > 0; have++ {
		c := b[len(b)-1]
		b = b[:len(b)-1]
		if c < 128 || c >= 248 {
			return to, nil
		}
		if c >= 192 {
			if have < seqLen(c) {
				to -= have
			}
			if to < from && from <= size {
				to = from
			}
			return to, nil
		}
	}
	return to, nil
}

// escEnd is bg_escend with WHOLE, at a cut to the cap: to less an escape
// sequence cut off there, or carriage returns a newline may follow (the
// last 4 KiB are looked at); a range [from, to) that is all of that is
// taken whole instead (escWhole), up to whole.
func escEnd(f *os.File, from, to, whole int64) (int64, error) {
	k := min(to-from, 4096)
	if k <= 0 {
		return to, nil
	}
	b, err := readAt(f, to-k, k)
	if err != nil {
		return 0, err
	}
	n := len(b)
	cut := n
	if e := bytes.LastIndexByte(b, 0x1b); e >= 0 {
		done := false
		c := -1
		if e+1 < n {
			c = int(b[e+1])
		}
		switch {
		case c == '[' || c >= 0x20 && c <= 0x2f:
			hi := byte(0x3f)
			if c != '[' {
				hi = 0x2f
			}
			for _, x := range b[e+2:] {
				if x < 0x20 || x > hi {
					done = true
					break
				}
			}
		case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
			done = bytes.ContainsAny(b[e+2:], "\a\x18\x1a\n")
		case c >= 0:
			done = true
		}
		if !done {
			cut = e
		}
	}
	for cut > 0 && b[cut-1] == '\r' {
		cut--
	}
	switch {
	case cut > 0:
		return to - int64(n-cut), nil
	case int64(n) != to-from:
		return to, nil
	}
	return escWhole(f, from, to, whole)
}

// escWhole is bg_escwhole: the end, not past whole, of the escape
// sequence at from, or of the carriage returns there (with the sequences
// between them, and a newline after them), of the 4 KiB from there; never
// below to.
func escWhole(f *os.File, from, to, whole int64) (int64, error) {
	k := min(whole-from, 4096)
	if k <= 0 {
		return to, nil
	}
	b, err := readAt(f, from, k)
	if err != nil {
		return 0, err
	}
	i := 0
	if len(b) > 0 && b[0] == 0x1b {
		i, _ = termtext.SequenceLen(b)
	} else {
		for i < len(b) {
			if b[i] == '\r' {
				i++
				continue
			}
			if b[i] != 0x1b {
				break
			}
			m, complete := termtext.SequenceLen(b[i:])
			if !complete {
				i = len(b)
				break
			}
			i += m
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
	}
	return max(to, from+int64(i)), nil
}
