package records

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bgjob/bgjob/shellgen"
)

// Kind is the kind of a record: the first field of its line. A record is
// one line of tab-separated fields; this is the whole vocabulary the
// scripts in sh/ print, in the order a reader meets them.
type Kind string

// The record kinds.
const (
	// KindBoot: B BOOT_ID. The host's boot id ("" when unknown), first in
	// every script's output.
	KindBoot Kind = "B"
	// KindJob: J DIR (escaped). An observation of the job in DIR begins;
	// the Meta, Proc, Exit, Ended, Stop, Dropped, Queued, Started, NotRun,
	// LogsFull, Ready, Live and Port records after it belong to it.
	KindJob Kind = "J"
	// KindMeta: M LINE. The first line of meta.json.
	KindMeta Kind = "M"
	// KindMetaSize: V LIMIT. meta.json is larger than LIMIT bytes
	// (jobdir.MaxMetaSize) and was not read: it takes the Meta record's
	// place.
	KindMetaSize Kind = "V"
	// KindProc: P START. The current start time of the process whose pid
	// meta.json records ("" when there is none), read before exit_code.
	KindProc Kind = "P"
	// KindExit: X LINE. The first line of exit_code (or of a complete
	// exit_code.tmp).
	KindExit Kind = "X"
	// KindEnded: T LINE. The first line of ended_at.
	KindEnded Kind = "T"
	// KindStop: S LINE. The first line of the stop marker, "REASON SIGNAL".
	KindStop Kind = "S"
	// KindDropped: Y STREAM COUNT. The first line of STREAM.dropped.
	KindDropped Kind = "Y"
	// KindQueued: Q LINE. The first line of the queued file: what a job
	// whose wrapper waits for its turn waits for ("slot", "after ID").
	KindQueued Kind = "Q"
	// KindStarted: s LINE. The first line of the started_at file: when
	// the command of a job that waited for its turn started. (The capital
	// letters are all taken.)
	KindStarted Kind = "s"
	// KindNotRun: U LINE. The first line of the not_run file: why the job
	// ended without running its command.
	KindNotRun Kind = "U"
	// KindLogsFull: I LINE. The logs_full file is there (its first line,
	// "" for an empty one): the logs' file system had no space left when
	// the command ended, and its output may be missing.
	KindLogsFull Kind = "I"
	// KindReady: r LINE. The first line of the ready_at file: when a line
	// of the job's output matched its readiness pattern (run --ready).
	KindReady Kind = "r"
	// KindLive: L COUNT METHOD. How many processes of the job are alive
	// besides its wrapper (bg_live), and how they were found: proc (its
	// process group and, by the job id in their environment, those that
	// left it) or ps (its process group only: the host has no /proc).
	KindLive Kind = "L"
	// KindPort: p PORT PROTO ADDRESS. A TCP port one of the job's live
	// processes listens on (PROTO tcp), at ADDRESS ("0.0.0.0", "::",
	// "127.0.0.1"): after the Live record, of a look that asked for ports
	// (shellgen.Status.Ports, List.Ports), one record a port and address.
	KindPort Kind = "p"
	// KindPortTaken: n PORT. The TCP port a launch took (run --port,
	// shellgen.PortScript).
	KindPortTaken Kind = "n"
	// KindOutcome: O OUTCOME. What a stop did (stopped, gone, untied) to
	// the job whose observation follows.
	KindOutcome Kind = "O"
	// KindKept: K REASON DIR (escaped). Prune kept the job in DIR, which
	// its rule selects, for REASON: live (it has live processes). Its
	// observation follows, unless the job was removed meanwhile.
	KindKept Kind = "K"
	// KindHeld: H STATE DIR (escaped). The launch of a named job found the
	// job in DIR holding the name: STATE is held (it runs on beside the
	// new job) or replaced (run --replace stopped it, and its processes
	// are gone). Its observation follows, unless the job was removed
	// meanwhile.
	KindHeld Kind = "H"
	// KindError: E KIND SUBJECT (escaped). A refusal; see the Err* kinds.
	KindError Kind = "E"
	// KindRemoved: R DIR (escaped). A job directory was removed.
	KindRemoved Kind = "R"
	// KindRemoving: d DIR (escaped). The removal of a job directory
	// begins: its R record follows once it is gone, or an E record says
	// why it stays. A removal cut short between the two may have
	// removed it.
	KindRemoving Kind = "d"
	// KindWait: W STATE. A wait gave up (timeout) or, looking once, found
	// the jobs still running (pending); a wait for a line saw the job end
	// without one (ended); a watch of events saw the jobs change (changed,
	// shellgen.WatchScript).
	KindWait Kind = "W"
	// KindMore: N more. A list stopped at its limit with older jobs left.
	KindMore Kind = "N"
	// KindData: D STREAM OFFSET LENGTH LIVE, then exactly LENGTH raw bytes
	// of the log STREAM from OFFSET. LIVE is 1 when the job was running: a
	// Check record follows the bytes.
	KindData Kind = "D"
	// KindCheck: C STREAM DROPPED. The dropped count of STREAM read after
	// the bytes of the Data record before it: those below DROPPED may have
	// been dropped by the log cap as they were read, and are not the log's.
	KindCheck Kind = "C"
	// KindCut: Z STREAM. The range of STREAM just sent was cut to the byte
	// cap: the log holds more of what was asked for.
	KindCut Kind = "Z"
	// KindSent: A sent. A read with a cursor (logs --new) has sent every
	// range: the script moves the cursor over what its reader reports on
	// stdin ("STREAM OFFSET" lines) until stdin ends, then ends.
	KindSent Kind = "A"
	// KindScanned: F STREAM OFFSET MARK. A wait for a line, looking once,
	// read STREAM up to OFFSET without a match: the next look starts
	// there. MARK is the log's bytes just before OFFSET (up to
	// shellgen.MarkLen, in hex; empty at 0), which the next look checks
	// (shellgen.WaitFor.Marks).
	KindScanned Kind = "F"
	// KindRewound: t STREAM SIZE. The log STREAM is SIZE bytes, below where
	// the read had got to: it was truncated (logrotate's copytruncate,
	// ": > stdout.log"), and all it holds now is new. The read goes on from
	// its start, the Data records after this one from there.
	KindRewound Kind = "t"
	// KindDelivered: G BYTES. A send whose copy was ended (timeout) had
	// written BYTES of its input to the job's stdin FIFO: the job reads
	// them unless it ends first.
	KindDelivered Kind = "G"
)

// The kinds of refusal an Error record names.
const (
	ErrKindNotFound = "notfound" // no job has that id or name
	ErrKindSymlink  = "symlink"  // the job's directory is a symbolic link, never followed
	ErrKindBusy     = "busy"     // the job still has live processes
	ErrKindCwd      = "cwd"      // the working directory does not exist
	ErrKindRoot     = "root"     // the root or workspace is unsafe or cannot be made
	ErrKindExists   = "exists"   // the job directory already exists
	ErrKindIO       = "io"       // a file or directory could not be written
	ErrKindSetsid   = "setsid"   // the host cannot start a process group
	ErrKindStart    = "start"    // the wrapper did not start
	ErrKindNotEmpty = "notempty" // the job directory holds files bgjob did not write
	ErrKindOutside  = "outside"  // a directory is not a job directory under the root
	ErrKindNoStdin  = "nostdin"  // the job was not started with --stdin
	ErrKindNoPTY    = "nopty"    // the host cannot run a PTY job (no capable script(1))
	ErrKindNoCap    = "nocap"    // the host cannot enforce --max-log-size (no fallocate -p)
	// ErrKindNoCgroup: the job cannot have a cgroup of its own (run
	// --memory, --cpus).
	ErrKindNoCgroup = "nocgroup"
	ErrKindEnded    = "ended"    // the job has ended
	ErrKindReadOnly = "readonly" // the job directory cannot be changed
	// ErrKindTimeout: the host gave up waiting (send --timeout).
	ErrKindTimeout = "timeout"
	// ErrKindCursorBusy: another reader holds the read cursor's lock.
	ErrKindCursorBusy = "cursorbusy"
	// ErrKindRegex: grep -E cannot compile the expression (wait --for).
	ErrKindRegex = "regex"
	// ErrKindNameBusy: another run --replace of the name held its lock
	// too long.
	ErrKindNameBusy = "namebusy"
	// ErrKindPortTaken: the port run --port asked for is taken; the
	// subject says by what ("job ID", "process PID (NAME)", or "").
	ErrKindPortTaken = "porttaken"
	// ErrKindNoPort: run --port auto found no free port in its range
	// (the subject, "LOW-HIGH").
	ErrKindNoPort = "noport"
)

// fields is how many fields each kind has after its letter, and which of
// them (1-based, 0: none) the script escaped with bg_esc.
var fields = map[Kind]struct{ n, escaped int }{
	KindBoot: {1, 0}, KindJob: {1, 1}, KindMeta: {1, 0}, KindMetaSize: {1, 0}, KindProc: {1, 0},
	KindExit: {1, 0}, KindEnded: {1, 0}, KindStop: {1, 0}, KindDropped: {2, 0},
	KindLive: {2, 0}, KindPort: {3, 0}, KindPortTaken: {1, 0}, KindQueued: {1, 0}, KindStarted: {1, 0}, KindNotRun: {1, 0}, KindLogsFull: {1, 0}, KindReady: {1, 0}, KindKept: {2, 2}, KindHeld: {2, 2},
	KindOutcome: {1, 0}, KindError: {2, 2}, KindRemoved: {1, 1}, KindRemoving: {1, 1}, KindWait: {1, 0},
	KindMore: {1, 0}, KindData: {4, 0}, KindCheck: {2, 0}, KindCut: {1, 0},
	KindScanned: {3, 0}, KindSent: {1, 0}, KindDelivered: {1, 0}, KindRewound: {2, 0},
}

// Record is one record of a script's output.
type Record struct {
	Kind   Kind
	Fields []string
	// Data holds the bytes of a Data record; what the callback does not
	// read is skipped.
	Data io.Reader
}

// Field returns field i (0-based) of r, "" when r has fewer.
func (r Record) Field(i int) string {
	if i < len(r.Fields) {
		return r.Fields[i]
	}
	return ""
}

// ErrTruncated is returned when a script's output ends before its end
// marker without a read error: the script was killed.
var ErrTruncated = errors.New("script output ended early")

// ErrStop may be returned by a Decode callback to stop reading early.
var ErrStop = errors.New("stop decoding")

// Decode reads a script's output: it skips what precedes the begin marker,
// then calls fn for each record, in order, until the end marker. A read
// error is returned wrapped; output that ends before the end marker is
// ErrTruncated. An ErrStop from fn ends decoding with a nil error.
func Decode(r io.Reader, fn func(Record) error) error {
	err := decode(r, fn)
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// decode is Decode, an ErrStop from fn returned as it is.
func decode(r io.Reader, fn func(Record) error) error {
	out := output{br: bufio.NewReaderSize(r, 64<<10)}
	if err := out.skipToBegin(); err != nil {
		return err
	}
	for {
		line, err := out.line()
		if err != nil {
			return err
		}
		if line == "" {
			continue
		}
		if line == shellgen.EndMarker {
			return nil
		}
		rec, err := parse(line)
		if err != nil {
			return err
		}
		if rec.Kind == KindData {
			err = out.data(rec, line, fn)
		} else {
			err = fn(rec)
		}
		if err != nil {
			return err
		}
	}
}

// output is a script's output as decode reads it.
type output struct {
	br *bufio.Reader
}

// line reads the next line, without its newline. Output that ends before
// the line does is ErrTruncated.
func (o output) line() (string, error) {
	line, err := o.br.ReadString('\n')
	if err == io.EOF {
		return "", ErrTruncated
	}
	if err != nil {
		return "", fmt.Errorf("reading script output: %w", err)
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// skipToBegin reads up to and including the begin marker.
func (o output) skipToBegin() error {
	for {
		line, err := o.line()
		if err != nil {
			return err
		}
		if line == shellgen.BeginMarker {
			return nil
		}
	}
}

// parse splits line into a record of a known kind with its number of
// fields, its escaped field unescaped.
func parse(line string) (Record, error) {
	letter, rest, _ := strings.Cut(line, "\t")
	kind := Kind(letter)
	f, ok := fields[kind]
	if !ok {
		return Record{}, fmt.Errorf("unexpected line in script output: %q", line)
	}
	rec := Record{Kind: kind, Fields: strings.SplitN(rest, "\t", f.n)}
	if len(rec.Fields) != f.n {
		return Record{}, fmt.Errorf("malformed %s record %q", kind, line)
	}
	if f.escaped > 0 {
		rec.Fields[f.escaped-1] = unescape(rec.Fields[f.escaped-1])
	}
	return rec, nil
}

// data passes fn the Data record rec (of line) with its bytes to read,
// then skips what fn left of them. Output that ends before the bytes do
// is ErrTruncated.
func (o output) data(rec Record, line string, fn func(Record) error) error {
	n, err := strconv.ParseInt(rec.Fields[2], 10, 64)
	if _, oerr := strconv.ParseInt(rec.Fields[1], 10, 64); err != nil || oerr != nil || n < 0 {
		return fmt.Errorf("malformed data record %q", line)
	}
	d := &io.LimitedReader{R: o.br, N: n}
	rec.Data = d
	if err := fn(rec); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, d); err != nil {
		return fmt.Errorf("reading script output: %w", err)
	}
	if d.N > 0 {
		return ErrTruncated
	}
	return nil
}

// unescape undoes bg_esc: \\, \n and \t.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Fields returns each record kind Decode knows with its number of fields.
func Fields() map[Kind]int {
	m := map[Kind]int{}
	for k, f := range fields {
		m[k] = f.n
	}
	return m
}
