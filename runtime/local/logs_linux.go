package local

import (
	"bufio"
	"bytes"
	"context"
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

// logs returns what logs.sh would print for q, made in Go, as a reader,
// and a function that closes the logs it reads from, and whether the
// answer is stable (a look made again at once, by the script, prints the
// same: not so for a running job, whose logs grow meanwhile). It makes a
// plain read (the whole log, tail, head, bytes or offset, with or without
// a cap; no follow, no reader's cursor) of a job named by id, or by a
// name nativeFind finds: an ended job's ranges in
// one D record each, a running job's in chunks of at most 1 MiB, each
// followed by the count of bytes its --max-log-size cap has dropped (a C
// record), as bg_chunk prints them. Every other case is the script's (ok
// false), as for status; the bytes are compared with the script's by
// TestNativeLogsIsTheScripts and, under CheckEnv, at every stable answer.
func (a answerer) logs(ctx context.Context, q shellgen.Logs, stdin io.Reader) (r io.Reader, done func(), stable, ok bool) {
	mode, _, _ := q.Range()
	if q.Follow || len(q.Streams) == 0 || q.New != (mode == "new") {
		return nil, nil, false, false
	}
	begin, boot, ok := a.nativeBegin()
	if !ok {
		return nil, nil, false, false
	}
	dir, ok := a.nativeFind(q.Ref)
	if !ok {
		return nil, nil, false, false
	}
	files, ok := openLogs(dir, q.Streams)
	if !ok {
		return nil, nil, false, false
	}
	closeLogs := func() {
		for _, f := range files {
			f.Close()
		}
	}
	j, ok := lookAtJob(dir, boot, files)
	if !ok {
		closeLogs()
		return nil, nil, false, false
	}
	if q.New {
		r, finished, ok := newRead(ctx, q, j, files, stdin, begin+j.obs)
		if !ok {
			closeLogs()
			return nil, nil, false, false
		}
		// The read has ended, its cursor moved, before the answer does.
		return r, func() { closePipe(r); <-finished; closeLogs() }, false, true
	}
	reads, ok := j.reads(q, files)
	if !ok {
		closeLogs()
		return nil, nil, false, false
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeLogs(pw, begin+j.obs, reads, dir))
	}()
	return pr, func() { pr.Close(); closeLogs() }, !j.live, true
}

// openLogs opens the logs of streams of the job in dir; not ok where
// one is not a regular file (bg_logsok: the script says how, bg_nolog)
// or cannot be opened.
func openLogs(dir string, streams []string) ([]*os.File, bool) {
	var files []*os.File
	for _, st := range streams {
		name := filepath.Join(dir, st+".log")
		fi, err := os.Lstat(name)
		if st != "stdout" && st != "stderr" || err != nil || !fi.Mode().IsRegular() {
			break
		}
		f, err := proc.Open(name)
		if err != nil {
			break
		}
		files = append(files, f)
	}
	if len(files) < len(streams) {
		for _, f := range files {
			f.Close()
		}
		return nil, false
	}
	return files, true
}

// logJob is what a read of the logs of the job in dir sees of it, in
// logs.sh's order: the sizes of its logs, its records (obs), whether it
// is a PTY job (tty), and whether it runs (live).
type logJob struct {
	dir   string
	sizes []int64
	obs   string
	tty   bool
	live  bool
	ended bool // exit_code was there first: the sizes were taken before the records
}

// lookAtJob looks at the job in dir, whose logs are files, on the boot
// boot; not ok where the script must.
func lookAtJob(dir, boot string, files []*os.File) (logJob, bool) {
	j := logJob{dir: dir, sizes: make([]int64, len(files))}
	// An ended job's: exit_code, once whole, stays; its logs' sizes are
	// taken before its records (bg_endsizes).
	ended := exited(dir)
	j.ended = ended
	if ended && !sizesOf(files, j.sizes) {
		return logJob{}, false
	}
	obs, meta, ok := nativeObsRec(dir)
	if !ok {
		return logJob{}, false
	}
	j.obs, j.tty = obs, strings.Contains(meta, `"pty":true`)
	if !ended {
		// bg_running, unless the records say that it has ended (an
		// exit_code.tmp the wrapper has written: the read reports the job
		// ended, so it reads its logs whole), then the sizes.
		if !strings.Contains(obs, "\nX\t") {
			if j.live, ok = wrapperRunning(dir, boot); !ok {
				return logJob{}, false
			}
		}
		if !sizesOf(files, j.sizes) {
			return logJob{}, false
		}
	}
	return j, true
}

// reads makes the read of each log of q, files, of j: its range, after a
// rewind where the reader's mark is gone from an offset read's log.
func (j logJob) reads(q shellgen.Logs, files []*os.File) ([]logRead, bool) {
	mode, n, _ := q.Range()
	reads := make([]logRead, len(files))
	left := max(q.MaxBytes, 0)
	for i, st := range q.Streams {
		f, off, size := files[i], max(q.Offsets[st], 0), j.sizes[i]
		rd := logRead{stream: st, f: f, live: j.live, size: size}
		if mark := q.Marks[st]; mode == "offset" && len(mark) > 0 {
			// The reader's mark there, gone: truncated since (bg_moved).
			if off > size || size > off && jobdir.MarkMoved(f, size, off, mark, jobdir.Dropped(j.dir, st)) {
				rd.rewound = true
				off = 0
			}
		}
		ask := logAsk{mode: mode, n: n, offset: off, live: j.live, tty: j.tty, capped: q.MaxBytes > 0}
		dr, err := droppedOf(j.dir, st)
		if err != nil {
			return nil, false
		}
		rg, err := logRange(f, size, dr, ask, &left)
		if err != nil {
			return nil, false
		}
		rd.span = rg
		reads[i] = rd
	}
	return reads, true
}

// sizesOf sets sizes to the sizes of files; not ok where one cannot be
// read.
func sizesOf(files []*os.File, sizes []int64) bool {
	for i, f := range files {
		fi, err := f.Stat()
		if err != nil {
			return false
		}
		sizes[i] = fi.Size()
	}
	return true
}

// logRead is the read of one log that a logs answer prints.
type logRead struct {
	stream  string
	f       *os.File
	size    int64 // the log's size when its range was made
	span    span
	live    bool // the job was running (bg_live 1)
	rewound bool // the reader's mark was gone: read from the start
}

// writeLogs writes head, then each read's records and bytes, as logs.sh
// prints them (bg_chunk), then the end marker.
func writeLogs(w io.Writer, head string, reads []logRead, dir string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head)
	for _, rd := range reads {
		if err := writeRead(bw, rd, dir); err != nil {
			return err
		}
	}
	bw.WriteString(nativeEnd)
	return bw.Flush()
}

// writeRead writes the records and bytes of rd: a t record first where
// it was rewound, a Z record after where the cap cut it.
func writeRead(w *bufio.Writer, rd logRead, dir string) error {
	if rd.rewound {
		fmt.Fprintf(w, "t\t%s\t%d\n", rd.stream, rd.size)
	}
	if err := rd.chunks(w, dir); err != nil {
		return err
	}
	if rd.span.cut {
		fmt.Fprintf(w, "Z\t%s\n", rd.stream)
	}
	return nil
}

// closePipe closes r where it is the reader of a pipe: its writer stops.
func closePipe(r io.Reader) {
	if pr, ok := r.(*io.PipeReader); ok {
		pr.Close()
	}
}

// chunks writes rd's bytes in D records: one for an ended job's, else a
// chunk of at most 1 MiB each, followed by a C record of the bytes the cap
// dropped meanwhile (bg_chunk). A log that ends before the bytes (it was
// truncated under the read) gives NUL bytes in their place (bg_exact), a
// t record of its size, and no more of its chunks, and the Z record is
// left out (bg_chunked), as in logs.sh.
func (rd *logRead) chunks(w *bufio.Writer, dir string) error {
	from, to := rd.span.from, rd.span.to
	if !rd.live {
		fmt.Fprintf(w, "D\t%s\t%d\t%d\t0\n", rd.stream, from, to-from)
		short, err := exactCopy(w, rd.f, from, to-from)
		if err != nil || !short {
			return err
		}
		return rd.truncated(w)
	}
	for {
		ct := min(from+1<<20, to)
		fmt.Fprintf(w, "D\t%s\t%d\t%d\t1\n", rd.stream, from, ct-from)
		short, err := exactCopy(w, rd.f, from, ct-from)
		if err != nil {
			return err
		}
		if short {
			return rd.truncated(w)
		}
		fmt.Fprintf(w, "C\t%s\t%s\n", rd.stream, droppedCount(dir, rd.stream))
		if from = ct; from >= to {
			return nil
		}
	}
}

// truncated writes the t record of a log found shorter than a read of
// it (bg_chunked), and leaves out rd's Z record.
func (rd *logRead) truncated(w *bufio.Writer) error {
	fi, err := rd.f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "t\t%s\t%d\n", rd.stream, fi.Size())
	rd.span.cut = false
	return nil
}

// droppedCount is what bg_chunk prints of the log's .dropped file: its
// first line, "0" where there is none (or it is empty).
func droppedCount(dir, stream string) string {
	l, ok := firstLine(filepath.Join(dir, stream+".dropped"))
	if !ok || l == "" {
		return "0"
	}
	return l
}

// exactCopy writes n bytes of f from off, no fewer: where f ends first,
// NUL bytes fill up to n and short is true (bg_exact).
func exactCopy(w io.Writer, f *os.File, off, n int64) (short bool, err error) {
	m, err := io.Copy(w, io.NewSectionReader(f, off, n))
	if err != nil {
		return false, err
	}
	if m == n {
		return false, nil
	}
	_, err = io.CopyN(w, zeros{}, n-m)
	return true, err
}

// zeros reads NUL bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
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

// logAsk is what a read asks of one log: mode, n and zero as bg_mode,
// bg_n and bg_zero, offset as bg_from_STREAM (in mode new the cursor's),
// live as bg_live, tty as bg_tty (a PTY job's), and whether a cap bounds
// it (bg_max > 0).
type logAsk struct {
	mode            string
	n, offset       int64
	zero, live, tty bool
	capped          bool
}

// logRange is the range logs.sh sends of the log f, of size sz, whose
// first dr bytes the cap dropped, for a, and, when capped, left the bytes the cap
// still allows (bg_left), which it lowers.
func logRange(f *os.File, sz, dr int64, a logAsk, left *int64) (span, error) {
	from, to, back, ahead, err := modeRange(f, sz, dr, a)
	if err != nil {
		return span{}, err
	}
	from = max(from, dr)
	to = min(to, sz)
	from = min(from, to)
	if ahead >= 0 {
		from, to = ahead, ahead
	}
	cut := false
	if a.capped && to-from > *left {
		cut = true
		if from, to, err = capRange(f, from, to, *left, back, a.live); err != nil {
			return span{}, err
		}
	}
	*left = max(*left-(to-from), 0)
	return span{from, to, cut}, nil
}

// droppedOf reads the count of bytes the cap dropped from the log of st
// (its .dropped file; 0 where there is none); errNotNative for a count
// the script would read otherwise.
func droppedOf(dir, st string) (int64, error) {
	name := filepath.Join(dir, st+".dropped")
	if _, err := os.Stat(name); err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	l, ok := firstLine(name)
	if !ok || strings.Trim(l, "0123456789") != "" || len(l) > 18 || l != "" && l[0] == '0' && l != "0" {
		return 0, errNotNative
	}
	return jobdir.DecodeDropped(l), nil
}

// modeRange is the range of a's mode in the log f of size sz whose first
// dr bytes the cap dropped, before the clamps: whether the range keeps
// its end when cut (back), and where a running job's read waits past the
// end of its log (ahead, -1: it does not).
func modeRange(f *os.File, sz, dr int64, a logAsk) (from, to int64, back bool, ahead int64, err error) {
	from, to, ahead = 0, sz, -1
	switch a.mode {
	case "tail":
		if sz != 0 {
			from, err = tailStart(f, sz, a.n)
		}
		return from, to, true, ahead, err
	case "head":
		if sz == dr {
			return dr, dr, false, ahead, nil
		}
		h, err := headLen(f, dr, a.n)
		return dr, dr + h, false, ahead, err
	case "bytes":
		return sz - a.n, to, true, ahead, nil
	case "offset":
		from = a.offset
		if !a.live {
			return from, to, false, ahead, nil
		}
		// Past the end of a running job's log the read waits there; it
		// stops before an incomplete UTF-8 character (bg_utf8end), and a
		// PTY job's before an escape sequence cut off (bg_escend).
		if from > sz {
			ahead = from
		}
		if to, err = utf8End(f, sz, from); err != nil || !a.tty {
			return from, to, false, ahead, err
		}
		to, err = escEnd(f, from, to, -1)
		return from, to, false, ahead, err
	case "new":
		// From the reader's cursor (offset), as offset reads while the
		// job runs; with n (or zero) only the last n lines of that,
		// keeping its end when cut.
		from, back = a.offset, a.n > 0 || a.zero
		if a.live {
			if to, err = utf8End(f, sz, from); err == nil && a.tty {
				to, err = escEnd(f, from, to, -1)
			}
		}
		if err == nil && back {
			var tl int64
			tl, err = tailStart(f, to, a.n)
			from = max(from, tl)
		}
		return from, to, back, ahead, err
	case "all":
		return from, to, false, ahead, nil
	}
	return 0, 0, false, ahead, errNotNative
}

// capRange cuts [from, to) to the left bytes the cap allows: from its end
// where back (from a character's first byte), else from its start, before
// an incomplete UTF-8 character or escape sequence, but at least one
// whole character, which, while the job runs (live), must be all there.
func capRange(f *os.File, from, to, left int64, back, live bool) (int64, int64, error) {
	if back {
		from = to - left
		// Start at a character: skip the continuation bytes of one the
		// cut split (of the next three).
		b, err := readAt(f, from, 3)
		if err != nil {
			return 0, 0, err
		}
		for _, c := range b {
			if c < 128 || c >= 192 {
				break
			}
			from++
		}
		return from, to, nil
	}
	whole := to
	to, err := utf8End(f, from+left, from)
	if err != nil {
		return 0, 0, err
	}
	to = max(to, from)
	if to == from && left > 0 {
		// A cap smaller than the next character takes it whole; still
		// incomplete while the job runs: nothing yet.
		b, err := readAt(f, from, 1)
		if err != nil {
			return 0, 0, err
		}
		need := int64(1)
		if len(b) == 1 {
			need = seqLen(b[0])
		}
		to = min(from+need, whole)
		if live && to-from != need {
			to = from
		}
	}
	if to > from {
		if to, err = escEnd(f, from, to, whole); err != nil {
			return 0, 0, err
		}
	}
	return from, to, nil
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

// escEnd is bg_escend: to less an escape sequence cut off there, or
// carriage returns a newline may follow (the last 4 KiB are looked at);
// a range [from, to) that is all of that stays, or, at a cut to the cap
// (whole, the end of the range before it; -1: not a cut), is taken whole
// instead (escWhole).
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
	switch cut := escCut(b); {
	case cut > 0:
		return to - int64(n-cut), nil
	case int64(n) != to-from || whole < 0:
		return to, nil
	}
	return escWhole(f, from, to, whole)
}

// escCut is where bg_escend's awk cuts b: before its last escape sequence
// when b ends inside it, then before the carriage returns that end what
// is left.
func escCut(b []byte) int {
	n := len(b)
	cut := n
	if e := bytes.LastIndexByte(b, 0x1b); e >= 0 && !seqDone(b[e+1:]) {
		cut = e
	}
	for cut > 0 && b[cut-1] == '\r' {
		cut--
	}
	return cut
}

// seqDone says whether the escape sequence whose bytes after ESC are b
// ends within them: a CSI (or an nF sequence) at a byte past its range of
// parameters, a string (OSC, DCS, SOS, PM, APC) at BEL, CAN, SUB or a
// newline, any other at its one byte.
func seqDone(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	switch c := b[0]; {
	case c == '[' || c >= 0x20 && c <= 0x2f:
		hi := byte(0x3f)
		if c != '[' {
			hi = 0x2f
		}
		for _, x := range b[1:] {
			if x < 0x20 || x > hi {
				return true
			}
		}
		return false
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return bytes.ContainsAny(b[1:], "\a\x18\x1a\n")
	}
	return true
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
