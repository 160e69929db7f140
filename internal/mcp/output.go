package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const outputDoc = `Read a job's output. By default returns only what this client has not read yet (a durable read cursor,
as "bgjob logs --new"): repeated calls never return the same bytes twice and skip nothing.
offset reads from a byte offset instead (stateless; give stream stdout or stderr); tail_lines and head_lines read the
end or the start; since "start" reads from the beginning. filter, a POSIX extended regular expression (as job_wait's until_output), keeps only matching
lines at read time: it never discards data (a filtered read has its own cursor; unfiltered reads still see
everything), and judges whole lines only (a line still being written is returned once it ends; one whose bytes or text outgrow the cap
is judged a cap's worth at a time). Results are capped (max_bytes); truncated says there is more: call again, or read on from next_offset.
Every result says where each stream's read ended (next_offset, and in streams), for a client that reads by offset.
A read moves the cursor once the client calls again, or closes the server's input after the result.`

type outputIn struct {
	ID        string `json:"id" jsonschema:"job id or name"`
	Stream    string `json:"stream,omitempty" jsonschema:"stdout, stderr or both (default both)"`
	Since     string `json:"since,omitempty" jsonschema:"new (default: what this client has not read yet) or start"`
	Offset    *int64 `json:"offset,omitempty" jsonschema:"read from this byte offset of the stream (stateless); past the end of the log the result says so and gives log_size"`
	TailLines int    `json:"tail_lines,omitempty" jsonschema:"only the last N lines"`
	HeadLines int    `json:"head_lines,omitempty" jsonschema:"only the first N lines"`
	Filter    string `json:"filter,omitempty" jsonschema:"return only the lines that match this POSIX extended regular expression, leftmost-longest, as until_output of job_wait (e.g. error|warn; [0-9], not \\d, which is refused)"`
	MaxBytes  int    `json:"max_bytes,omitempty" jsonschema:"return at most this many bytes of output (default and maximum: the server's cap); a cap below the next character takes that character whole"`
	Raw       bool   `json:"raw,omitempty" jsonschema:"keep terminal escape sequences (colours, cursor moves)"`
	Host      string `json:"host,omitempty" jsonschema:"host of the job (default: the server's host)"`
}

type outputOut struct {
	jobView
	Text         string           `json:"text" jsonschema:"the output: UTF-8 (invalid bytes as \\xNN), escape sequences stripped unless raw; with both streams each part headed --- stdout --- or --- stderr ---; a cut ends with a notice"`
	NextOffset   *int64           `json:"next_offset,omitempty" jsonschema:"offset to read on from (one stream only)"`
	LogSize      *int64           `json:"log_size,omitempty" jsonschema:"with an offset past the end of the log: the log's size, from where it reads on (a running job's read stays at the offset, for the bytes to come; an ended job's is pulled back to the end)"`
	Truncated    bool             `json:"truncated" jsonschema:"the read was cut to the cap: there is more"`
	SkippedBytes int64            `json:"skipped_bytes" jsonschema:"bytes of lines the filter left out"`
	Streams      []bgjob.LogRange `json:"streams" jsonschema:"per log: stream, offset and next_offset of the bytes read, truncated, and rewound: the log was found truncated (logrotate's copytruncate) and read again from its start, which the text says too"`
}

// readSpec is one read of a job's logs.
type readSpec struct {
	id         string
	stream     string // "stdout", "stderr" or "" for both
	cursor     bool   // what this client has not read (with tail: the end of it)
	offset     *int64
	tail, head int
	filter     *regexp.Regexp
	filterSrc  string
	max        int
	raw        bool
	host       string // the host the client c of read is for
}

type readResult struct {
	job       jobdir.Job
	text      string
	ranges    []bgjob.LogRange
	truncated bool
	skipped   int64
}

func (s *Server) output(ctx context.Context, req *sdk.CallToolRequest, in outputIn) (*sdk.CallToolResult, outputOut, error) {
	rs, err := readSpecOf(in)
	if err != nil {
		return nil, outputOut{}, err
	}
	var (
		r    readResult
		host string
		size *int64
	)
	err = s.do(ctx, in.Host, true, s.limit(0), func(ctx context.Context, c *bgjob.Client, h string) (err error) {
		host = h
		rs.host = h
		if r, err = s.read(ctx, c, req, rs); err != nil || in.Offset == nil {
			return err
		}
		size, err = pastEnd(ctx, c, rs, *in.Offset, r)
		return err
	})
	if err != nil {
		return nil, outputOut{}, err
	}
	s.digest.shown(host, []jobdir.Job{r.job})
	out := outputOut{jobView: viewOf(r.job), Text: r.text, Truncated: r.truncated, SkippedBytes: r.skipped, Streams: r.ranges, LogSize: size}
	out.Host = host
	if rs.stream != "" && len(r.ranges) == 1 {
		out.NextOffset = &r.ranges[0].Next
	}
	return result("%s\n%s", outputHead(r, rs.stream, in.Offset, size), r.text), out, nil
}

// readSpecOf checks job_output's arguments, and makes them a read.
func readSpecOf(in outputIn) (readSpec, error) {
	rs := readSpec{id: in.ID, offset: in.Offset, tail: in.TailLines, head: in.HeadLines, max: in.MaxBytes, raw: in.Raw, filterSrc: in.Filter}
	switch in.Stream {
	case "", "both":
	case "stdout", "stderr":
		rs.stream = in.Stream
	default:
		return readSpec{}, fmt.Errorf("stream %q: want stdout, stderr or both", in.Stream)
	}
	if in.TailLines < 0 || in.HeadLines < 0 || in.MaxBytes < 0 || in.Offset != nil && *in.Offset < 0 {
		return readSpec{}, errors.New("offset, tail_lines, head_lines and max_bytes must not be negative")
	}
	switch in.Since {
	case "", "new":
		rs.cursor = in.Offset == nil && in.HeadLines == 0 && (in.TailLines == 0 || in.Since == "new")
	case "start":
		zero := int64(0)
		rs.offset = &zero
	default:
		return readSpec{}, fmt.Errorf("since %q: want new or start", in.Since)
	}
	if err := rs.options(0).Validate(); err != nil {
		return readSpec{}, argError(err, outputArgs)
	}
	if in.Offset != nil && rs.stream == "" {
		return readSpec{}, errors.New(`offset needs stream "stdout" or "stderr": the two logs have offsets of their own`)
	}
	if in.Filter != "" {
		re, err := bgjob.CompileERE(in.Filter)
		if err != nil {
			return readSpec{}, fmt.Errorf("filter: %w", err)
		}
		rs.filter = re
	}
	return rs, nil
}

// outputHead is the head of job_output's text: the job's status; what
// the read found (nothing new, or an offset past the end of the log of
// stream, whose size is size); each log read again from its start, on a
// line of its own; and where to read on from, by offset: a client that
// keeps no state (a server a call) goes on exactly there.
func outputHead(r readResult, stream string, offset, size *int64) string {
	head := fmt.Sprintf("job %s %s", r.job.ID, exitText(viewOf(r.job)))
	if r.text == "" {
		head += "; no new output"
	}
	if size != nil {
		head += fmt.Sprintf("; offset %d is past the end of %s (%d bytes", *offset, stream, *size)
		if r.job.Status.Active() {
			head += fmt.Sprintf(" so far): the read waits at %d for the bytes to come; offset %d reads on from the end", *offset, *size)
		} else {
			head += "): read from its end"
		}
	}
	for _, rg := range r.ranges {
		if rg.Rewound {
			head += "\n" + rewoundText(r.job.ID, rg.Stream)
		}
	}
	var next []string
	for _, rg := range r.ranges {
		next = append(next, fmt.Sprintf("%s %d", rg.Stream, rg.Next))
	}
	if len(next) > 0 {
		head += "; next_offset " + strings.Join(next, ", ")
	}
	return head
}

// pastEnd returns the size of the log r read from offset when offset is
// past its end, else nil. The read's rule is the library's, as for logs
// --offset: a running job's read is an empty range at the offset (which
// the log may still reach), an ended job's is pulled back to the end. Only
// an empty read of a running job asks the log's size, with a read of no
// bytes from its end.
func pastEnd(ctx context.Context, c *bgjob.Client, rs readSpec, offset int64, r readResult) (*int64, error) {
	if len(r.ranges) != 1 || r.ranges[0].Next != r.ranges[0].Offset {
		return nil, nil
	}
	size := r.ranges[0].Offset
	if size == offset && r.job.Status.Active() && offset > 0 {
		res, err := c.Logs(ctx, r.job.ID, bgjob.LogOptions{Stdout: rs.stream == "stdout", Stderr: rs.stream == "stderr", Bytes: bgjob.Zero}, io.Discard, io.Discard)
		if err != nil {
			return nil, err
		}
		if len(res.Ranges) == 1 {
			size = res.Ranges[0].Offset
		}
	}
	if size >= offset {
		return nil, nil
	}
	return &size, nil
}

// options are the LogOptions of rs, capped at limit (0: no cap), through
// a Cursor of the default reader when rs reads through one (read gives it
// the client's).
func (rs readSpec) options(limit int) bgjob.LogOptions {
	o := bgjob.LogOptions{Stdout: rs.stream == "stdout", Stderr: rs.stream == "stderr", Tail: rs.tail, Head: rs.head, MaxBytes: int64(limit)}
	if rs.cursor {
		o.Cursor = &bgjob.Cursor{}
	}
	if rs.offset != nil {
		o.FromOffset, o.Offset = true, *rs.offset
	}
	return o
}

// outputArgs are job_output's arguments for the LogOptions fields a
// bgjob.FieldError names.
var outputArgs = map[string]string{"Tail": "tail_lines", "Head": "head_lines", "Offset": `offset (or since "start")`, "Cursor": `since "new"`, "MaxBytes": "max_bytes"}

// read reads a job's logs as rs says and makes the bytes into text.
func (s *Server) read(ctx context.Context, c *bgjob.Client, req *sdk.CallToolRequest, rs readSpec) (readResult, error) {
	limit := s.capOf(rs)
	o := rs.options(limit)
	var stdout, stderr bytes.Buffer
	if o.Cursor != nil {
		reader := s.readerFor(req)
		if rs.filter != nil {
			// A filtered read moves a cursor of its own, so that the lines it
			// leaves out are still new to unfiltered reads.
			sum := sha256.Sum256([]byte(rs.filterSrc))
			reader = reader[:min(len(reader), 54)] + "-f" + hex.EncodeToString(sum[:4])
		}
		// The result is written out after this returns: the job's Cursor
		// holds the read; the next one commits it (cursors).
		var done func(*bgjob.LogResult)
		o.Cursor, done = s.cursors.begin(rs.host, reader, rs.id)
		res, err := c.Logs(ctx, rs.id, o, &stdout, &stderr)
		if err != nil {
			done(nil)
			return readResult{}, err
		}
		// The cursor moves over what the text shows, no further: bytes
		// that escaping or a filter's cap left out, or the start of a line
		// a filter cannot judge yet, are the next read's.
		r := s.text(ctx, c, rs, limit, res, stdout.Bytes(), stderr.Bytes())
		shown := res
		shown.Ranges = r.ranges
		done(&shown)
		return r, nil
	}
	res, err := c.Logs(ctx, rs.id, o, &stdout, &stderr)
	if err != nil {
		return readResult{}, err
	}
	return s.text(ctx, c, rs, limit, res, stdout.Bytes(), stderr.Bytes()), nil
}

// text makes the bytes of a read into the text of a result.
func (s *Server) text(ctx context.Context, c *bgjob.Client, rs readSpec, limit int, res bgjob.LogResult, stdout, stderr []byte) readResult {
	r := readResult{job: res.Job, ranges: slices.Clone(res.Ranges)}
	if r.ranges == nil {
		r.ranges = []bgjob.LogRange{}
	}
	data := map[string][]byte{"stdout": stdout, "stderr": stderr}
	var (
		parts   []string
		notices []string
		budget  = limit
	)
	ended := !res.Job.Status.Active()
	// got says a range before has shown text or moved on: the call has
	// got on.
	got := false
	for i := range r.ranges {
		rg := &r.ranges[i]
		b := data[rg.Stream]
		cut := rg.Truncated
		var t string
		switch {
		case rs.tail > 0:
			// A tail keeps its end: what escaping makes too long is cut at
			// the start.
			if rs.filter != nil {
				b, r.skipped = filterLines(b, rs.filter, r.skipped)
			}
			var short bool
			t, short = capTail(clean(b, rs.raw), max(budget, 0))
			cut = cut || short
		case rs.filter != nil:
			// The cap (bgjob's MaxBytes) is of both streams together: a
			// read cut to what another stream left of it waits for a read
			// of its own before it is judged a piece.
			f := filterRead(b, rs.filter, rs.raw, max(budget, 0), limit, ended && !rg.Truncated, rg.Truncated && !got)
			t, r.skipped = f.text, r.skipped+f.skipped
			rg.Next = rg.Offset + int64(f.used)
			cut = cut || f.cut
		default:
			var used int
			t, used = cleanMax(b, rs.raw, max(budget, 0))
			if used < len(b) {
				// Escaping made the text longer than its bytes: the rest
				// is read on from where the text stops.
				rg.Next = rg.Offset + int64(used)
				cut = true
			}
		}
		budget -= len(t)
		got = got || t != "" || rg.Next > rg.Offset
		if cut {
			rg.Truncated = true
			notices = append(notices, s.cutNotice(ctx, c, rs, *rg))
		}
		r.truncated = r.truncated || cut
		if t != "" {
			parts = append(parts, rg.Stream, t)
		}
	}
	r.text = joinParts(parts, notices)
	return r
}

// joinParts is the text of a result: parts, pairs of a stream and its
// text, each headed --- stream --- and ended with a newline when there is
// more than one, then the notices of the cuts. A notice stands on a line
// of its own right after the text: a blank line before it when the text
// ends a line, none after the frame's newline.
func joinParts(parts, notices []string) string {
	var sb strings.Builder
	switch len(parts) {
	case 0:
	case 2:
		sb.WriteString(parts[1])
	default:
		for i := 0; i < len(parts); i += 2 {
			fmt.Fprintf(&sb, "--- %s ---\n%s", parts[i], parts[i+1])
			if !strings.HasSuffix(parts[i+1], "\n") {
				sb.WriteByte('\n')
				if i+2 == len(parts) && len(notices) > 0 {
					notices[0] = strings.TrimPrefix(notices[0], "\n")
				}
			}
		}
	}
	for _, n := range notices {
		sb.WriteString(n)
	}
	return sb.String()
}

// filtered is what a filter kept of a read.
type filtered struct {
	text    string // the lines kept, as text, within the budget
	used    int    // the bytes of the read it stands for
	skipped int64  // the bytes of the lines left out among them
	cut     bool   // a line kept did not fit the budget
}

// filterRead keeps, as text within budget, the lines of b, a read of a log,
// that re matches.
//
// A line with no end yet counts only when whole says it is one (the job
// has ended and the read reached the end of its log); else it, and what
// follows the last line that fits, is left for the next read (used stops
// there). A read cut at the cap may hold no whole line at all: when piece
// says so (the read had the cap to itself) a line longer than the cap is
// judged a piece at a time, the whole read when it holds nothing else,
// however short (a read at a cap of 1 byte holds one character, and one
// backed off to a character boundary may hold less than the cap): the
// next read would start at the same place and hold the same bytes, so the
// reads would never get past it.
//
// A line kept whose text is longer than the cap, limit, shows as much of
// its start as fits the budget (at least a character, as cleanMax), and
// used stops after the bytes shown: a read moves only over log bytes whose
// text it returned, and the next read judges the rest as a piece. A line
// that would fit a cap of its own but not the budget left (the other
// stream took some) waits whole for the next read, so that it is judged
// whole.
func filterRead(b []byte, re *regexp.Regexp, raw bool, budget, limit int, whole, piece bool) filtered {
	var f filtered
	var sb strings.Builder
	for f.used < len(b) {
		line := b[f.used:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		} else if !whole && !(piece && f.used == 0) {
			break
		}
		if !re.Match(bytes.TrimSuffix(line, []byte("\n"))) {
			f.skipped += int64(len(line))
			f.used += len(line)
			continue
		}
		t := clean(line, raw)
		if sb.Len()+len(t) <= budget {
			sb.WriteString(t)
			f.used += len(line)
			continue
		}
		f.cut = true
		if sb.Len() == 0 && budget > 0 && len(t) > limit {
			t, n := cleanMax(line, raw, budget)
			sb.WriteString(t)
			f.used += n
		}
		break
	}
	f.text = sb.String()
	return f
}

// filterLines keeps the lines of b that re matches and adds the length of
// the others to skipped.
func filterLines(b []byte, re *regexp.Regexp, skipped int64) ([]byte, int64) {
	var kept []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if re.Match(bytes.TrimSuffix(line, []byte("\n"))) {
			kept = append(kept, line...)
		} else {
			skipped += int64(len(line))
		}
	}
	return kept, skipped
}

// cutNotice says what a read cut to its cap left out, and how to read it.
// How much is left out takes one more read: the size of the log.
func (s *Server) cutNotice(ctx context.Context, c *bgjob.Client, rs readSpec, rg bgjob.LogRange) string {
	if rs.tail > 0 {
		return fmt.Sprintf("\n[%s cut to the cap of %s: the %s before offset %d %s not shown; read them with head_lines, or offset and stream %q]\n",
			rg.Stream, byteCount(int64(s.capOf(rs))), byteCount(rg.Offset), rg.Offset, isAre(rg.Offset), rg.Stream)
	}
	left := "more bytes after it are"
	if size, err := s.logSize(ctx, c, rs.id, rg.Stream); err == nil && size >= rg.Next {
		left = byteCount(size-rg.Next) + " after it " + isAre(size-rg.Next)
	}
	var how string
	switch {
	case rs.filter != nil && rs.cursor:
		how = "call job_output again with the same filter for the next part"
	case rs.filter != nil:
		how = fmt.Sprintf("read on with the same filter, offset %d and stream %q", rg.Next, rg.Stream)
	case rs.cursor:
		how = fmt.Sprintf("call job_output again for the next part, or read on with offset %d and stream %q", rg.Next, rg.Stream)
	default:
		how = fmt.Sprintf("read on with offset %d and stream %q", rg.Next, rg.Stream)
	}
	return fmt.Sprintf("\n[%s cut to the cap of %s at offset %d: %s not shown; %s]\n",
		rg.Stream, byteCount(int64(s.capOf(rs))), rg.Next, left, how)
}

// byteCount is n bytes in words: "1 byte", "2 bytes".
func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// isAre is the verb for n bytes.
func isAre(n int64) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// capOf is the cap of a read: max_bytes, at most the server's cap.
func (s *Server) capOf(rs readSpec) int {
	if rs.max > 0 && rs.max < s.opts.MaxOutput {
		return rs.max
	}
	return s.opts.MaxOutput
}

// logSize returns the size of a job's log: an empty read at its end.
func (s *Server) logSize(ctx context.Context, c *bgjob.Client, id, stream string) (int64, error) {
	res, err := c.Logs(ctx, id, bgjob.LogOptions{Stdout: stream == "stdout", Stderr: stream == "stderr", Bytes: bgjob.Zero}, io.Discard, io.Discard)
	if err != nil {
		return 0, err
	}
	for _, rg := range res.Ranges {
		if rg.Stream == stream {
			return rg.Offset, nil
		}
	}
	return 0, fmt.Errorf("no %s in the reply", stream)
}
