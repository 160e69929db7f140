package records

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/bgjob/bgjob/jobdir"
)

// Handler receives what a script reported, assembled from its records:
// the one place where records become observations, refusals and log
// bytes. A nil callback ignores what it would receive; a callback's error
// ends decoding (ErrStop without an error).
type Handler struct {
	// Job receives each job observed (with the host's boot id filled in)
	// and what a stop did to it ("" if it was not stopped), or "kept" for
	// a job prune kept because it has live processes, or "held" or
	// "replaced" for a job of the same name a launch found (OutcomeHeld,
	// OutcomeReplaced).
	Job func(o jobdir.Observation, outcome string) error
	// Refused receives each refusal: its kind (ErrKind*) and subject.
	Refused func(kind, subject string) error
	// Removed receives each job directory removed.
	Removed func(dir string) error
	// Removing receives each job directory whose removal begins.
	Removing func(dir string) error
	// Data receives bytes of a log from offset: only bytes that are the
	// log's (none that the cap dropped while they were read).
	Data func(stream string, offset int64, r io.Reader) error
	// Wait receives the state of a wait that did not see the jobs end:
	// "timeout" or "pending", or of a wait for a line that saw the job end
	// without one: "ended"; or "changed", each change a watch of events
	// saw.
	Wait func(state string)
	// More is called when a list stopped at its limit.
	More func()
	// Cut receives each stream whose range was cut to the byte cap, after
	// its Data.
	Cut func(stream string)
	// Scanned receives how far a wait for a line read each stream, and the
	// mark of the log there (its bytes just before offset).
	Scanned func(stream string, offset int64, mark []byte)
	// Sent is called when a read with a cursor has sent every range: the
	// script now waits for the reader's last commit and the end of its
	// stdin (see KindSent).
	Sent func() error
	// Rewound receives each stream whose log was found truncated, shorter
	// (size) than where the read had got to: the Data after it starts
	// again from the log's start.
	Rewound func(stream string, size int64)
	// Delivered receives how many bytes of its input a send that was
	// ended had written to the job's stdin.
	Delivered func(n int64)
	// PortTaken receives the TCP port a launch took (run --port).
	PortTaken func(port int)
	// Begun is called at the boot record every script prints first: the
	// host answers.
	Begun func()
}

// OutcomeKept is the outcome Handler.Job receives for a job prune kept
// because it has live processes.
const OutcomeKept = "kept"

// The outcomes Handler.Job receives for a job that had the name of a job
// being launched: OutcomeHeld when it runs on beside the new job,
// OutcomeReplaced when run --replace stopped it.
const (
	OutcomeHeld     = "held"
	OutcomeReplaced = "replaced"
)

// Decode reads a script's output from r (see Decode) and hands what it
// reports to h. It reports whether a callback stopped it with ErrStop
// before the end marker.
func (h Handler) Decode(r io.Reader) (stopped bool, err error) {
	d := &decoder{h: h}
	err = Decode(r, func(rec Record) error {
		err := d.record(rec)
		stopped = errors.Is(err, ErrStop)
		return err
	})
	if err == nil && !stopped && d.live.held && d.live.whole {
		d.live.held = false
		if err = d.live.emit(h, "0"); errors.Is(err, ErrStop) {
			stopped, err = true, nil
		}
	}
	if err == nil && !stopped {
		if err = d.flush(); errors.Is(err, ErrStop) {
			stopped, err = true, nil
		}
	}
	return stopped, err
}

// decoder is the state of one Handler.Decode: the job being observed and
// what the records before its J record said of it, and the bytes of a D
// record held until the record after it says whose they are.
type decoder struct {
	h       Handler
	boot    string
	cur     *jobdir.Observation
	outcome string
	kept    string    // the directory of a K record, until its J record
	held    [2]string // the state and directory of an H record, until its J record
	live    liveChunk // the bytes of a D record, until its C (or next) record
}

// flush hands on the job being observed, if any.
func (d *decoder) flush() error {
	if d.cur == nil {
		return nil
	}
	d.cur.BootID = d.boot
	o, out := *d.cur, d.outcome
	d.cur, d.outcome = nil, ""
	if d.h.Job == nil {
		return nil
	}
	return d.h.Job(o, out)
}

// observed are the kinds that add to the observation of the job their J
// record began (see observe).
var observed = map[Kind]bool{
	KindMeta: true, KindMetaSize: true, KindProc: true, KindExit: true, KindEnded: true,
	KindStop: true, KindDropped: true, KindLive: true, KindQueued: true, KindStarted: true,
	KindNotRun: true, KindLogsFull: true, KindReady: true, KindPort: true,
}

// after is what each other kind does, once the job before it is complete
// (handed on) and no live data waits for its check record.
var after = map[Kind]func(*decoder, Record) error{
	KindBoot:      (*decoder).onBoot,
	KindJob:       (*decoder).onJob,
	KindOutcome:   func(d *decoder, rec Record) error { d.outcome = rec.Field(0); return nil },
	KindKept:      func(d *decoder, rec Record) error { d.kept = rec.Field(1); return nil },
	KindHeld:      func(d *decoder, rec Record) error { d.held = [2]string{rec.Field(0), rec.Field(1)}; return nil },
	KindError:     (*decoder).onError,
	KindRemoved:   func(d *decoder, rec Record) error { return call1(d.h.Removed, rec.Field(0)) },
	KindRemoving:  func(d *decoder, rec Record) error { return call1(d.h.Removing, rec.Field(0)) },
	KindWait:      func(d *decoder, rec Record) error { notify1(d.h.Wait, rec.Field(0)); return nil },
	KindMore:      func(d *decoder, _ Record) error { notify(d.h.More); return nil },
	KindCut:       func(d *decoder, rec Record) error { notify1(d.h.Cut, rec.Field(0)); return nil },
	KindSent:      func(d *decoder, _ Record) error { return call(d.h.Sent) },
	KindScanned:   (*decoder).onScanned,
	KindRewound:   (*decoder).onRewound,
	KindDelivered: (*decoder).onDelivered,
	KindPortTaken: (*decoder).onPortTaken,
	KindData:      (*decoder).onData,
}

// record handles one record for Decode.
func (d *decoder) record(rec Record) error {
	if d.live.held && d.live.whole {
		// The bytes of an ended job's D record are the log's unless this
		// record says the log ended before them.
		d.live.held = false
		if rec.Kind != KindRewound || rec.Field(0) != d.live.stream {
			if err := d.live.emit(d.h, "0"); err != nil {
				return err
			}
		}
	}
	switch {
	case rec.Kind == KindRewound && d.live.held && d.live.stream == rec.Field(0):
		// The log ended before the piece did: filled with NUL bytes, it
		// is not the log's.
		d.live.held = false
	case observed[rec.Kind]:
		if d.cur == nil {
			return fmt.Errorf("record %s outside a job", rec.Kind)
		}
		observe(d.cur, rec)
		return nil
	case rec.Kind == KindCheck:
		if !d.live.held || d.live.stream != rec.Field(0) {
			return fmt.Errorf("check record without live data")
		}
		d.live.held = false
		return d.live.emit(d.h, rec.Field(1))
	}
	if err := d.flush(); err != nil {
		return err
	}
	if d.live.held {
		return fmt.Errorf("%s record after live data without a check record", rec.Kind)
	}
	if f := after[rec.Kind]; f != nil {
		return f(d, rec)
	}
	return nil
}

func (d *decoder) onBoot(rec Record) error {
	d.boot = rec.Field(0)
	notify(d.h.Begun)
	return nil
}

func (d *decoder) onJob(rec Record) error {
	d.cur = &jobdir.Observation{Dir: rec.Field(0)}
	if d.kept == rec.Field(0) {
		d.outcome = OutcomeKept
	}
	if d.held[1] == rec.Field(0) && (d.held[0] == OutcomeHeld || d.held[0] == OutcomeReplaced) {
		d.outcome = d.held[0]
	}
	d.kept, d.held = "", [2]string{}
	return nil
}

func (d *decoder) onError(rec Record) error {
	// An outcome belongs to the job that follows it, not to a refusal (a
	// job removed after it was stopped).
	d.outcome = ""
	if d.h.Refused != nil {
		return d.h.Refused(rec.Field(0), rec.Field(1))
	}
	return nil
}

func (d *decoder) onScanned(rec Record) error {
	off, err := strconv.ParseInt(rec.Field(1), 10, 64)
	if err != nil {
		return fmt.Errorf("malformed scanned record %q", rec.Field(1))
	}
	mark, err := hex.DecodeString(rec.Field(2))
	if err != nil {
		return fmt.Errorf("malformed scanned record %q", rec.Field(2))
	}
	if d.h.Scanned != nil {
		d.h.Scanned(rec.Field(0), off, mark)
	}
	return nil
}

func (d *decoder) onRewound(rec Record) error {
	size, err := strconv.ParseInt(rec.Field(1), 10, 64)
	if err != nil {
		return fmt.Errorf("malformed rewound record %q", rec.Field(1))
	}
	if d.h.Rewound != nil {
		d.h.Rewound(rec.Field(0), size)
	}
	return nil
}

func (d *decoder) onDelivered(rec Record) error {
	n, err := strconv.ParseInt(rec.Field(0), 10, 64)
	if err != nil {
		return fmt.Errorf("malformed delivered record %q", rec.Field(0))
	}
	if d.h.Delivered != nil {
		d.h.Delivered(n)
	}
	return nil
}

func (d *decoder) onPortTaken(rec Record) error {
	n, err := strconv.Atoi(rec.Field(0))
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("malformed port record %q", rec.Field(0))
	}
	if d.h.PortTaken != nil {
		d.h.PortTaken(n)
	}
	return nil
}

// onData handles a D record. The bytes of a live job's (LIVE 1) are held
// until the check record says which of them are the log's; the script
// sends at most 1 MiB at a time, read into the buffer of the chunk before
// (a follow of a flood is hundreds of them). Those of an ended job's are
// held too, up to maxLiveChunk, until the next record: a t record there
// says the log was truncated under the read, and the bytes, filled up with
// NUL bytes, are not the log's. A longer range goes on at once.
func (d *decoder) onData(rec Record) error {
	off, _ := strconv.ParseInt(rec.Field(1), 10, 64)
	live := rec.Field(3) == "1"
	n, err := strconv.ParseInt(rec.Field(2), 10, 64)
	if live && (err != nil || n < 0 || n > maxLiveChunk) {
		return fmt.Errorf("malformed live data record: length %q", rec.Field(2))
	}
	if !live && (err != nil || n > maxLiveChunk) {
		if d.h.Data != nil {
			return d.h.Data(rec.Field(0), off, rec.Data)
		}
		return nil
	}
	if int64(cap(d.live.data)) < n {
		d.live.data = make([]byte, n)
	}
	d.live.data = d.live.data[:n]
	if _, err := io.ReadFull(rec.Data, d.live.data); err != nil {
		if !live && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
			return ErrTruncated
		}
		return fmt.Errorf("reading script output: %w", err)
	}
	d.live.stream, d.live.offset, d.live.held, d.live.whole = rec.Field(0), off, true, !live
	return nil
}

// call, call1, notify and notify1 call a Handler's callback when it is set.
func call(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

func call1(f func(string) error, s string) error {
	if f == nil {
		return nil
	}
	return f(s)
}

func notify(f func()) {
	if f != nil {
		f()
	}
}

func notify1(f func(string), s string) {
	if f != nil {
		f(s)
	}
}

// observe adds what rec reports to the observation o.
func observe(o *jobdir.Observation, rec Record) {
	switch rec.Kind {
	case KindMeta:
		o.Meta, o.HasMeta = rec.Field(0), true
	case KindMetaSize:
		o.HasMeta, o.MetaTooLarge = true, true
	case KindProc:
		o.ProcStart = rec.Field(0)
	case KindExit:
		o.ExitCode, o.HasExit = rec.Field(0), true
	case KindEnded:
		o.EndedAt = rec.Field(0)
	case KindStop:
		o.Stop = rec.Field(0)
	case KindLive:
		o.LiveProcesses, o.ProcessScan = rec.Field(0), rec.Field(1)
	case KindQueued:
		o.Queued = rec.Field(0)
	case KindStarted:
		o.StartedAt = rec.Field(0)
	case KindNotRun:
		o.NotRun = rec.Field(0)
	case KindLogsFull:
		o.LogsFull = true
	case KindReady:
		o.ReadyAt = rec.Field(0)
	case KindPort:
		if n, err := strconv.Atoi(rec.Field(0)); err == nil && n > 0 && n < 65536 {
			o.Ports = append(o.Ports, jobdir.Port{Port: n, Proto: rec.Field(1), Address: rec.Field(2)})
		}
	case KindDropped:
		if rec.Field(0) == "stderr" {
			o.StderrDropped = rec.Field(1)
		} else {
			o.StdoutDropped = rec.Field(1)
		}
	}
}

// liveChunk is the bytes of a live job's log, held until its check record.
type liveChunk struct {
	held   bool
	whole  bool // an ended job's D record: no C record follows
	stream string
	offset int64
	data   []byte
}

// maxLiveChunk bounds the bytes of one D record of a live job: the script
// sends at most 1 MiB (bg_chunk); a larger length is no script's.
const maxLiveChunk = 8 << 20

// emit hands on the part of the chunk at or above dropped, the bytes the
// cap had not dropped when the script finished reading them.
func (c *liveChunk) emit(h Handler, dropped string) error {
	d, _ := strconv.ParseInt(dropped, 10, 64)
	skip := min(max(d-c.offset, 0), int64(len(c.data)))
	if h.Data == nil {
		return nil
	}
	return h.Data(c.stream, c.offset+skip, bytes.NewReader(c.data[skip:]))
}
