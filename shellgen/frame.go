package shellgen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bgjob/bgjob/jobdir"
)

// ErrTruncated is returned when a script's output ends before its end
// marker: the script was killed or the connection dropped.
var ErrTruncated = errors.New("script output ended early")

// ErrStop may be returned by a Decode callback to stop reading early.
var ErrStop = errors.New("stop decoding")

// Event is one thing a script reported.
type Event struct {
	// Job is a job's observation (with the host's boot id filled in) and
	// Outcome what a stop did to it ("" if not stopped).
	Job     *jobdir.Observation
	Outcome string
	// Err is a refusal: Kind is notfound, busy, cwd, root, exists, io, ...;
	// Subject names the job or explains.
	Err *RefError
	// Removed is a job directory that was removed.
	Removed string
	// TimedOut reports that a wait gave up.
	TimedOut bool
	// More reports that a list stopped at its limit with older jobs left.
	More bool
	// Data, when not nil, streams the bytes of a log from Offset, as a D
	// record announced them; what the callback does not read is skipped.
	Data   io.Reader
	Stream string
	Offset int64
}

// RefError is an error a script reported about one job or the root.
type RefError struct {
	Kind    string
	Subject string
}

func (e *RefError) Error() string {
	switch e.Kind {
	case "notfound":
		return fmt.Sprintf("job %s not found", e.Subject)
	case "busy":
		return fmt.Sprintf("job %s is still running (stop it first, or use --force)", e.Subject)
	}
	return e.Subject
}

// Decode reads a script's output: it skips what precedes the begin marker,
// then calls fn for each event, in order, until the end marker. It returns
// ErrTruncated when the end marker is missing.
func Decode(r io.Reader, fn func(Event) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if strings.TrimSuffix(line, "\n") == BeginMarker {
			break
		}
		if err != nil {
			return ErrTruncated
		}
	}
	var (
		boot    string
		cur     *jobdir.Observation
		outcome string
	)
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.BootID = boot
		ev := Event{Job: cur, Outcome: outcome}
		cur, outcome = nil, ""
		return fn(ev)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ErrTruncated
		}
		line = strings.TrimSuffix(line, "\n")
		kind, val, _ := strings.Cut(line, "\t")
		if line == EndMarker {
			return stopOK(flush())
		}
		switch kind {
		case "J", "O", "E", "R", "W", "D", "N":
			if kind != "O" || cur != nil {
				if err := flush(); err != nil {
					return stopOK(err)
				}
			}
		}
		if cur == nil && strings.Contains("MPXTSY", kind) && kind != "" {
			return fmt.Errorf("record %s outside a job", kind)
		}
		switch kind {
		case "":
		case "B":
			boot = val
		case "J":
			cur = &jobdir.Observation{Dir: val}
		case "M":
			cur.Meta, cur.HasMeta = val, true
		case "P":
			cur.ProcStart = val
		case "X":
			cur.ExitCode, cur.HasExit = val, true
		case "T":
			cur.EndedAt = val
		case "S":
			cur.Stop = val
		case "Y":
			stream, n, _ := strings.Cut(val, "\t")
			if stream == "stderr" {
				cur.StderrDropped = n
			} else {
				cur.StdoutDropped = n
			}
		case "O":
			outcome = val
		case "E":
			k, subj, _ := strings.Cut(val, "\t")
			if err := fn(Event{Err: &RefError{Kind: k, Subject: subj}}); err != nil {
				return stopOK(err)
			}
		case "R":
			if err := fn(Event{Removed: val}); err != nil {
				return stopOK(err)
			}
		case "W":
			if err := fn(Event{TimedOut: true}); err != nil {
				return stopOK(err)
			}
		case "N":
			if err := fn(Event{More: true}); err != nil {
				return stopOK(err)
			}
		case "D":
			f := strings.Split(val, "\t")
			var off, n int64
			if len(f) != 3 {
				return fmt.Errorf("malformed data record %q", line)
			}
			if _, err := fmt.Sscan(f[1], &off); err != nil {
				return fmt.Errorf("malformed data record %q", line)
			}
			if _, err := fmt.Sscan(f[2], &n); err != nil || n < 0 {
				return fmt.Errorf("malformed data record %q", line)
			}
			d := &io.LimitedReader{R: br, N: n}
			err := fn(Event{Data: d, Stream: f[0], Offset: off})
			if err == nil {
				_, err = io.Copy(io.Discard, d)
			}
			if err == nil && d.N > 0 {
				err = ErrTruncated
			}
			if err != nil {
				return stopOK(err)
			}
		default:
			return fmt.Errorf("unexpected line in script output: %q", line)
		}
	}
}

func stopOK(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}
