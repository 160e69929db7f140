package bgjob

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/bgjob/bgjob/shellgen"
)

// Cursor is a reader's read cursor of a job's logs, for LogOptions.Cursor:
// a read through it returns the bytes its reader has not read yet and
// moves the cursor over them. The cursor is kept in the job directory, one
// for each reader name, so successive reads from any process or machine
// each get only unread output. It moves only over bytes that reached their
// reader, a write to stdout or stderr that succeeded, as the read goes: a
// reader killed at any moment loses nothing, and gets again at most the
// bytes written since the last report to the host (every 256 KiB or second
// of a long read, and at its end, also when it ends early).
//
// Its fields, set before its first read, say how the bytes reach the
// reader. A caller that hands them on after Logs returns holds its reads
// (Hold) and tells the Cursor when they have arrived (Delivered): the next
// read through it moves the cursor over them first. Its methods are safe
// for concurrent use; it must not be copied once used.
type Cursor struct {
	// Reader names the cursor ("" for "default"): each reader gets all of
	// the output, once.
	Reader string
	// Hold moves the cursor over nothing: for a caller that hands the
	// bytes on after Logs returns (an MCP server, whose result is written
	// out later). Once they have reached their reader it says so with
	// Delivered.
	Hold bool
	// Deliver, when not nil, is called once every range has been read,
	// with the result so far, before the cursor moves over its bytes: it
	// moves only if Deliver returns nil. A caller that buffers stdout and
	// stderr (bgjob logs --new --json) writes them out there. Its error
	// ends Logs.
	Deliver func(LogResult) error
	// Unread, when not nil, says how many of the bytes written to the
	// writer of stream ("stdout" or "stderr": Logs's stdout or stderr) its
	// reader has not read yet, and whether that reader has gone, so they
	// never will be: a pipe's unread bytes. The cursor then moves only over
	// bytes read: before the last report Logs waits until everything is
	// read or the reader has gone (for up to 3 s, or until ctx is done),
	// and each report leaves out what is still unread. With Deliver, a read
	// is delivered only once all of it has been read. Without Unread,
	// bytes written count as delivered.
	Unread func(stream string) (n int64, gone bool)

	mu sync.Mutex
	// delivered is the read Delivered was last told of, until a read of
	// its job through the Cursor has moved the cursor over it.
	delivered *LogResult
}

// Delivered tells c that res, what a read through it returned while Hold
// kept the cursor where it was, has reached its reader, or will have by
// c's next read (an MCP server's result is written out before the
// client's next call). That read first moves the cursor forward, never
// back, to where res ended (the Next of each of its ranges, which the
// caller may move back over bytes it did not hand on), if its ref still
// names res's job, in the same script; then it reads from there. Until
// then the cursor stays where it was: a holder killed before its next
// read leaves the bytes to be read again. A holder that will not read
// again moves it with a read of nothing: Tail Zero, through c with Hold.
// c keeps one delivered read, the last it was told of: a read of another
// job through c leaves it for the next read of its own.
func (c *Cursor) Delivered(res LogResult) {
	res.Ranges = slices.Clone(res.Ranges)
	c.mu.Lock()
	c.delivered = &res
	c.mu.Unlock()
}

// commit has q move the cursor first over the read c was told was
// delivered, and returns that read (nil: none).
func (c *Cursor) commit(q *shellgen.Logs) *LogResult {
	c.mu.Lock()
	res := c.delivered
	c.mu.Unlock()
	if res == nil {
		return nil
	}
	q.CommitJob, q.Commit, q.CommitMarks = res.Job.ID, map[string]int64{}, map[string][]byte{}
	for _, r := range res.Ranges {
		q.Commit[r.Stream] = r.Next
		q.CommitMarks[r.Stream] = r.mark.at(r.Next)
	}
	return res
}

// committed forgets res once a read of job id, its job, has moved the
// cursor over it, unless c was told of another read since.
func (c *Cursor) committed(res *LogResult, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.delivered == res && res.Job.ID == id {
		c.delivered = nil
	}
}

// A read with a cursor (LogOptions.Cursor) moves the cursor only over bytes
// that reached their reader: the logs script sends its ranges without
// moving the cursor, and the client reports on the script's stdin how far
// each stream's bytes were written ("STREAM OFFSET" lines, see
// records.KindSent). It reports when a read is delivered, every
// commitEvery bytes or commitPeriod of a long one, and when a read ends
// early (an error, a cancelled ctx), so that a reader killed at any moment
// loses nothing, and one that is killed without a chance to report gets
// again at most what it was given since its last report.
const (
	commitEvery = 256 << 10
	// reportsAhead is how many reports the host may leave unread before a
	// delivery waits for it to read them (one: the one just made), up to
	// reportWait.
	reportsAhead = 1
	// maxMissed is how many waits in a row for the host to read the
	// reports may end unread before a read waits no more (reportWait).
	maxMissed = 3
)

// errReported ends a read with a cursor whose last report is made.
var errReported = errors.New("read ended")

// commits is the reporting side of one read with a cursor: it is the
// script's stdin.
type commits struct {
	hold   bool // report nothing (Cursor.Hold)
	mu     sync.Mutex
	more   *sync.Cond // signalled when buf grows or closed is set
	read   *sync.Cond // signalled when the script has read buf
	buf    []byte     // reports the script has not read yet
	ahead  int        // reports in buf
	missed int        // the waits in a row the script did not read them within reportWait
	closed bool
	eof    chan struct{}    // closed once the script's stdin has been read to its end
	ends   map[string]int64 // how far each stream was delivered
	// tails hold the last bytes of each log delivered: the mark of where
	// a reader got to, also where it left bytes unread in its pipe.
	tails   map[string]*logTail
	told    map[string]int64 // what the script was told
	order   []string         // streams in the order they were delivered
	unsent  int64            // bytes delivered since the last report
	last    time.Time        // the last report
	started bool             // a report was written
	// deliver, unless nil, is called when the whole read has arrived,
	// before the last report (Cursor.Deliver).
	deliver func() error
	// unread, unless nil, says how many bytes written for a stream its
	// reader has not read yet, and whether it has gone (Cursor.Unread).
	unread func(stream string) (int64, bool)
	starts map[string]int64 // where each stream's range began
	// quit ends the wait for the reader to read everything (the read's
	// context is done: Ctrl-C).
	quit <-chan struct{}
}

func newCommits(hold bool) *commits {
	c := &commits{hold: hold, eof: make(chan struct{}), ends: map[string]int64{}, tails: map[string]*logTail{}, told: map[string]int64{}, starts: map[string]int64{}, last: time.Now()}
	c.more = sync.NewCond(&c.mu)
	c.read = sync.NewCond(&c.mu)
	return c
}

// Read is the script's stdin: the reports, and io.EOF once finish has
// ended it. Reports never wait for the script to read them.
func (c *commits) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.buf) == 0 && !c.closed {
		c.more.Wait()
	}
	if len(c.buf) == 0 {
		select {
		case <-c.eof:
		default:
			close(c.eof)
		}
		return 0, io.EOF
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	if len(c.buf) == 0 {
		c.ahead = 0
		c.read.Broadcast()
	}
	return n, nil
}

// waitRead waits, the caller holding mu, while reportsAhead reports or
// more wait for the script to read them, up to reportWait; after
// maxMissed such waits in a row that ended unread, a read waits no more.
// A committer that was late once (a busy machine) is waited for again:
// one that was not waited for again fell megabytes behind its reader.
func (c *commits) waitRead() {
	if c.missed >= maxMissed || c.ahead < reportsAhead {
		return
	}
	deadline := time.Now().Add(reportWait)
	t := time.AfterFunc(reportWait, func() {
		c.mu.Lock()
		c.read.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	for c.ahead >= reportsAhead && !c.closed {
		if !time.Now().Before(deadline) {
			c.missed++
			return
		}
		c.read.Wait()
	}
	c.missed = 0
}

// delivered records that the bytes p of stream, up to end, reached the
// reader, and reports them when enough has gathered.
func (c *commits) delivered(stream string, end int64, p []byte) {
	n := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ends[stream]; !ok {
		c.order = append(c.order, stream)
		c.ends[stream], c.starts[stream] = end, end
		c.tails[stream] = &logTail{end: end}
		if c.unread == nil {
			// The cursor never stops short of what was written.
			c.tails[stream].keep = shellgen.MarkLen
		}
	}
	c.tails[stream].add(end-int64(n), p)
	c.ends[stream] = max(c.ends[stream], end)
	c.unsent += int64(n)
	if c.unsent >= commitEvery || time.Since(c.last) >= commitPeriod {
		c.report()
		c.waitRead()
	}
}

// release ends hold: the bytes delivered so far may be reported.
func (c *commits) release() {
	c.mu.Lock()
	c.hold = false
	c.mu.Unlock()
}

// sent is called when the script has sent every range: the read is
// delivered (deliver), reported, and the script's stdin ended.
func (c *commits) sent(done <-chan struct{}) error {
	if c.deliver != nil {
		if err := c.deliver(); err != nil {
			return err
		}
	}
	c.finish(done)
	return nil
}

// report tells the script what was delivered since it was last told; the
// caller holds mu. With unread, bytes written but not read yet are not
// delivered: they were the last written, so each stream's end goes back
// by its writer's unread bytes (by all of them when both streams share a
// pipe, which moves the cursor over too little, never too much), never
// below where it was. A read written out whole (deliver: one JSON
// document) is delivered only once all of it has been read.
func (c *commits) report() {
	if c.hold || c.closed {
		return
	}
	for _, st := range c.order {
		end := c.ends[st]
		if c.unread != nil {
			n, _ := c.unread(st)
			if n > 0 && c.deliver != nil {
				continue
			}
			told, ok := c.told[st]
			if !ok {
				told = c.starts[st]
			}
			end = max(end-n, told)
		}
		if told, ok := c.told[st]; !ok || told != end {
			// With the mark of the log there, where this read has it: a
			// cursor without one is checked by the log's size alone.
			c.buf = fmt.Appendf(c.buf, "%s %d", st, end)
			if m := c.tails[st].at(end); len(m) > 0 {
				c.buf = fmt.Appendf(c.buf, " %x", m)
			}
			c.buf = append(c.buf, '\n')
			c.ahead++
			c.told[st] = end
			c.started = true
		}
	}
	c.unsent, c.last = 0, time.Now()
	c.more.Broadcast()
}

// finish reports what was delivered and ends the script's stdin, then
// waits, up to commitGrace, until the runtime has read that end (so the
// report is on its way to the host) or exec is done (done closed). It
// says whether the script was ever told anything: whether cutting the
// script short might lose a report.
func (c *commits) finish(done <-chan struct{}) bool {
	c.drain(done)
	c.mu.Lock()
	c.report()
	c.closed = true
	told := c.started
	c.more.Broadcast()
	c.mu.Unlock()
	t := time.NewTimer(commitGrace)
	defer t.Stop()
	select {
	case <-c.eof:
	case <-done:
	case <-t.C:
	}
	return told
}

// drain waits, with unread, until the reader of every stream has read all
// that was written for it or has gone, or exec is done, quit closed or
// drainLimit passed: the last report then moves the cursor over every
// byte the readers took.
func (c *commits) drain(done <-chan struct{}) {
	if c.unread == nil {
		return
	}
	c.mu.Lock()
	streams := slices.Clone(c.order)
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	limit := time.NewTimer(drainLimit)
	defer limit.Stop()
	for wait := time.Millisecond; ; wait = min(2*wait, drainPoll) {
		if !slices.ContainsFunc(streams, func(st string) bool {
			n, gone := c.unread(st)
			return n > 0 && !gone
		}) {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-c.quit:
		case <-limit.C:
		case <-t.C:
			continue
		}
		t.Stop()
		return
	}
}

// deliveryWriter writes a stream's bytes, from end on, to w and tells
// commits how far each write reached.
type deliveryWriter struct {
	w      io.Writer
	c      *commits
	stream string
	end    int64
}

// deliveryPiece bounds one write of a deliveryWriter: a write under way
// when the last report is made (Ctrl-C) is not in it, so what a reader
// gets again is at most one piece (and what its pipe held). The held
// range of a running job's log is written in one call of up to 1 MiB.
const deliveryPiece = 32 << 10

func (d *deliveryWriter) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		d.c.mu.Lock()
		closed := d.c.closed
		d.c.mu.Unlock()
		if closed {
			// The last report is made: a byte more would be read again.
			return done, errReported
		}
		n, err := d.w.Write(p[done:min(len(p), done+deliveryPiece)])
		if n > 0 {
			done += n
			d.end += int64(n)
			d.c.delivered(d.stream, d.end, p[done-n:done])
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}
