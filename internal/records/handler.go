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
	// Data receives bytes of a log from offset: only bytes that are the
	// log's (none that the cap dropped while they were read).
	Data func(stream string, offset int64, r io.Reader) error
	// Wait receives the state of a wait that did not see the jobs end:
	// "timeout" or "pending", or of a wait for a line that saw the job end
	// without one: "ended".
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
	var (
		boot    string
		cur     *jobdir.Observation
		outcome string
		kept    string    // the directory of a K record, until its J record
		held    [2]string // the state and directory of an H record, until its J record
		live    liveChunk // the bytes of a D record of a live job, until its C record
	)
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.BootID = boot
		o, out := *cur, outcome
		cur, outcome = nil, ""
		if h.Job == nil {
			return nil
		}
		return h.Job(o, out)
	}
	err = Decode(r, func(rec Record) error {
		err := h.record(rec, &boot, &cur, &outcome, &kept, &held, &live, flush)
		stopped = errors.Is(err, ErrStop)
		return err
	})
	if err == nil && !stopped && live.held && live.whole {
		live.held = false
		if err = live.emit(h, "0"); errors.Is(err, ErrStop) {
			stopped, err = true, nil
		}
	}
	if err == nil && !stopped {
		if err = flush(); errors.Is(err, ErrStop) {
			stopped, err = true, nil
		}
	}
	return stopped, err
}

// record handles one record for decode.
func (h Handler) record(rec Record, boot *string, cur **jobdir.Observation, outcome, kept *string, held *[2]string, live *liveChunk, flush func() error) error {
	{
		if live.held && live.whole {
			// The bytes of an ended job's D record are the log's unless
			// this record says the log ended before them.
			live.held = false
			if rec.Kind != KindRewound || rec.Field(0) != live.stream {
				if err := live.emit(h, "0"); err != nil {
					return err
				}
			}
		}
		switch rec.Kind {
		case KindRewound:
			if live.held && live.stream == rec.Field(0) {
				// The log ended before the piece did: filled with NUL
				// bytes, it is not the log's.
				live.held = false
			}
		case KindMeta, KindMetaSize, KindProc, KindExit, KindEnded,
			KindStop, KindDropped, KindLive, KindQueued, KindStarted, KindNotRun, KindLogsFull:
			if *cur == nil {
				return fmt.Errorf("record %s outside a job", rec.Kind)
			}
			observe(*cur, rec)
			return nil
		case KindCheck:
			if !live.held || live.stream != rec.Field(0) {
				return fmt.Errorf("check record without live data")
			}
			live.held = false
			return live.emit(h, rec.Field(1))
		}
		if err := flush(); err != nil {
			return err
		}
		if live.held {
			return fmt.Errorf("%s record after live data without a check record", rec.Kind)
		}
		switch rec.Kind {
		case KindBoot:
			*boot = rec.Field(0)
			if h.Begun != nil {
				h.Begun()
			}
		case KindJob:
			*cur = &jobdir.Observation{Dir: rec.Field(0)}
			if *kept == rec.Field(0) {
				*outcome = OutcomeKept
			}
			if held[1] == rec.Field(0) && (held[0] == OutcomeHeld || held[0] == OutcomeReplaced) {
				*outcome = held[0]
			}
			*kept, *held = "", [2]string{}
		case KindOutcome:
			*outcome = rec.Field(0)
		case KindKept:
			*kept = rec.Field(1)
		case KindHeld:
			*held = [2]string{rec.Field(0), rec.Field(1)}
		case KindError:
			// An outcome belongs to the job that follows it, not to a
			// refusal (a job removed after it was stopped).
			*outcome = ""
			if h.Refused != nil {
				return h.Refused(rec.Field(0), rec.Field(1))
			}
		case KindRemoved:
			if h.Removed != nil {
				return h.Removed(rec.Field(0))
			}
		case KindWait:
			if h.Wait != nil {
				h.Wait(rec.Field(0))
			}
		case KindMore:
			if h.More != nil {
				h.More()
			}
		case KindCut:
			if h.Cut != nil {
				h.Cut(rec.Field(0))
			}
		case KindSent:
			if h.Sent != nil {
				return h.Sent()
			}
		case KindScanned:
			off, err := strconv.ParseInt(rec.Field(1), 10, 64)
			if err != nil {
				return fmt.Errorf("malformed scanned record %q", rec.Field(1))
			}
			mark, err := hex.DecodeString(rec.Field(2))
			if err != nil {
				return fmt.Errorf("malformed scanned record %q", rec.Field(2))
			}
			if h.Scanned != nil {
				h.Scanned(rec.Field(0), off, mark)
			}
		case KindRewound:
			size, err := strconv.ParseInt(rec.Field(1), 10, 64)
			if err != nil {
				return fmt.Errorf("malformed rewound record %q", rec.Field(1))
			}
			if h.Rewound != nil {
				h.Rewound(rec.Field(0), size)
			}
		case KindDelivered:
			n, err := strconv.ParseInt(rec.Field(0), 10, 64)
			if err != nil {
				return fmt.Errorf("malformed delivered record %q", rec.Field(0))
			}
			if h.Delivered != nil {
				h.Delivered(n)
			}
		case KindData:
			off, _ := strconv.ParseInt(rec.Field(1), 10, 64)
			if rec.Field(3) == "1" {
				// Hold the bytes until the check record says which of them
				// are the log's; the script sends at most 1 MiB at a time,
				// read into the buffer of the chunk before (a follow of a
				// flood is hundreds of them).
				n, err := strconv.ParseInt(rec.Field(2), 10, 64)
				if err != nil || n < 0 || n > maxLiveChunk {
					return fmt.Errorf("malformed live data record: length %q", rec.Field(2))
				}
				if int64(cap(live.data)) < n {
					live.data = make([]byte, n)
				}
				live.data = live.data[:n]
				if _, err := io.ReadFull(rec.Data, live.data); err != nil {
					return fmt.Errorf("reading script output: %w", err)
				}
				live.stream, live.offset, live.held, live.whole = rec.Field(0), off, true, false
				return nil
			}
			if n, err := strconv.ParseInt(rec.Field(2), 10, 64); err == nil && n <= maxLiveChunk {
				// Held too, until the next record: a t record there says
				// the log was truncated under the read, and the bytes,
				// filled up with NUL bytes, are not the log's. A longer
				// range goes on at once.
				if int64(cap(live.data)) < n {
					live.data = make([]byte, n)
				}
				live.data = live.data[:n]
				if _, err := io.ReadFull(rec.Data, live.data); err != nil {
					if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
						return ErrTruncated
					}
					return fmt.Errorf("reading script output: %w", err)
				}
				live.stream, live.offset, live.held, live.whole = rec.Field(0), off, true, true
				return nil
			}
			if h.Data != nil {
				return h.Data(rec.Field(0), off, rec.Data)
			}
		}
		return nil
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
