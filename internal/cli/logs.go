package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

// defaultMaxBytes is --max-bytes' default, the cap on the log data that
// logs prints where a program reads (--json, --new, --tail, --head) and
// run --wait prints: 64 KiB, enough for a screenful of errors, not a
// flood into a program's memory.
const defaultMaxBytes = 64 << 10

// logsOptions are logs' flags and argument: the job (ref) and what to
// read of it.
type logsOptions struct {
	bgjob.LogOptions
	ref    string
	offset int64
	// new and reader read through the cursor of reader (--new, --reader).
	new    bool
	reader string
	plain  bool
}

func (a *app) logsCommand() *cobra.Command {
	long, example := help("logs")
	var o logsOptions
	cmd := &cobra.Command{
		Use:     "logs ID",
		Short:   "Print a job's output",
		Long:    long,
		Example: example,
		Args:    needArgs(1, 1, "a job id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd.Flags(), a.json); err != nil {
				return err
			}
			o.ref = args[0]
			return a.runLogs(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Stdout, "stdout", false, "print only stdout.log")
	f.BoolVar(&o.Stderr, "stderr", false, "print only stderr.log, on stdout")
	f.BoolVar(&o.All, "all", false, "print both logs (the default)")
	f.IntVarP(&o.Tail, "tail", "n", 0, "print only the last N lines of each log (-n 2: two of stdout and two of stderr)")
	f.IntVar(&o.Head, "head", 0, "print only the first N lines of each log")
	f.Int64Var(&o.Bytes, "bytes", 0, "print only the last N bytes of each log")
	f.Int64Var(&o.offset, "offset", 0, "print the bytes from this byte offset")
	f.BoolVar(&o.new, "new", false, "print only what this reader has not read yet, and remember")
	f.StringVar(&o.reader, "reader", "", "name of the reader whose cursor --new moves (default \"default\")")
	f.BoolVarP(&o.Follow, "follow", "f", false, "keep printing until the job ends, then exit with its status")
	f.BoolVar(&o.plain, "plain", false, "print text: strip terminal escape sequences, \\r\\n as \\n (for --pty jobs)")
	f.BoolVar(&a.noPrefix, "no-prefix", false, "with several hosts, do not start each line with \"HOST: \"")
	f.Int64Var(&o.MaxBytes, "max-bytes", defaultMaxBytes, "print at most N bytes of log data with --json, --new, --tail or --head (0: no cap)")
	f.BoolVar(&a.json, "json", false, "print {id, status, exit_code, logs: [{stream, offset, next_offset, truncated, data}]}")
	return cmd
}

// complete checks the flags given, and turns them into the LogOptions:
// the cap on the data printed, the offset, the cursor, and a 0 given as
// Zero.
func (o *logsOptions) complete(flags *pflag.FlagSet, json bool) error {
	// Before Zero stands for a 0 given: -1 is Zero too.
	if o.Tail < 0 || o.Head < 0 || o.Bytes < 0 || o.offset < 0 || o.MaxBytes < 0 {
		return usageError("--tail, --head, --bytes, --offset and --max-bytes must not be negative")
	}
	if n := countTrue(o.Stdout, o.Stderr, o.All); n > 1 {
		return usageError("use one of --stdout, --stderr and --all")
	}
	if !flags.Changed("max-bytes") {
		o.MaxBytes = o.maxBytesDefault(json)
	}
	o.Offset, o.FromOffset = o.offset, flags.Changed("offset")
	o.zeroGiven(flags)
	if flags.Changed("reader") && o.reader == "" {
		return usageError("--reader needs a name (the default reader is \"default\")")
	}
	switch {
	case o.new:
		o.Cursor = &bgjob.Cursor{Reader: o.reader}
	case flags.Changed("reader"):
		return usageError("--reader goes with --new")
	}
	if err := o.Validate(); err != nil {
		return fieldError(err, logsFlags)
	}
	return nil
}

// maxBytesDefault is the cap on the log data printed when --max-bytes is
// not given: defaultMaxBytes where a program reads (--json, --new,
// --tail, --head), none otherwise.
func (o *logsOptions) maxBytesDefault(json bool) int64 {
	if json || o.new || o.Tail > 0 || o.Head > 0 {
		return defaultMaxBytes
	}
	return 0
}

// zeroGiven makes a 0 given to --tail, --head or --bytes Zero: zero means
// zero, --tail 0 prints no line, not the whole log.
func (o *logsOptions) zeroGiven(flags *pflag.FlagSet) {
	if flags.Changed("tail") && o.Tail == 0 {
		o.Tail = bgjob.Zero
	}
	if flags.Changed("head") && o.Head == 0 {
		o.Head = bgjob.Zero
	}
	if flags.Changed("bytes") && o.Bytes == 0 {
		o.Bytes = bgjob.Zero
	}
}

// logsFlags are the flags of the LogOptions fields a bgjob.FieldError
// names.
var logsFlags = map[string]string{"Tail": "--tail", "Head": "--head", "Bytes": "--bytes", "Offset": "--offset", "Cursor": "--new",
	"MaxBytes": "--max-bytes", "Follow": "--follow"}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// logChunk is one log's part of the --json output. Data is text: a byte
// that is not part of valid UTF-8 is given as U+FFFD; read it exactly with
// logs --offset and --bytes without --json.
type logChunk struct {
	bgjob.LogRange
	Data string `json:"data"`
}

// runLogs prints what o asks of its job's logs, from one host or several.
func (a *app) runLogs(ctx context.Context, lo logsOptions) error {
	ref, o, plain := lo.ref, lo.LogOptions, lo.plain
	// --follow waits: --host-timeout bounds each host's first answer.
	f := a.fleet(a.limit(0))
	o.Rewound = a.rewound(ref)
	if a.json {
		return a.logsJSON(ctx, f, ref, o, plain)
	}
	// --stdout or --stderr alone prints the log on stdout, ready for a
	// pipe.
	errw := a.stderr
	if o.Stdout || o.Stderr {
		errw = a.stdout
	}
	lctx, gone, stop := ctx, func() bool { return false }, func() {}
	if o.Cursor != nil || o.Follow {
		// A write that finds the reader gone fails with EPIPE rather
		// than kill bgjob with SIGPIPE: for --new, the cursor stays on
		// what was read; for --follow, that is how it ends (grep -m1
		// leaving while a long log is still being caught up on).
		defer quietPipe()()
	}
	if o.Cursor != nil {
		// The cursor moves over what the reader read, not over what
		// sits unread in a pipe; a reader that goes (head -c 100) leaves
		// the rest for the next read.
		o.Cursor.Unread = unreadOf(a.stdout, errw)
		if o.Cursor.Unread != nil && (plain || a.many()) {
			// The pipe holds text (--plain's, a host's prefix), not log
			// bytes: its unread bytes do not say how many log bytes
			// were not read. While any are unread, none written since
			// the last report count as read.
			o.Cursor.Unread = allOrNothing(o.Cursor.Unread)
		}
	}
	if o.Follow {
		// A follow ends when its reader goes away (grep -m1), on every
		// host.
		lctx, gone, stop = whileRead(ctx, a.stdout)
	}
	// With several hosts, each line starts with "HOST: " and the lines of
	// hosts never mix; --plain's text goes through the prefixer, and ends
	// before it.
	var mu sync.Mutex
	var writers []io.Closer
	res := f.Logs(lctx, ref, o, func(host string) (io.Writer, io.Writer) {
		mu.Lock()
		defer mu.Unlock()
		var out, errp io.Writer = a.stdout, errw
		if a.many() {
			prefix := host + ": "
			if a.noPrefix {
				prefix = ""
			}
			pout, perr := &prefixWriter{mu: &mu, w: a.stdout, prefix: prefix}, &prefixWriter{mu: &mu, w: errw, prefix: prefix}
			writers = append(writers, pout, perr)
			out, errp = pout, perr
		}
		if plain {
			pout, perr := termtext.NewWriter(out), termtext.NewWriter(errp)
			writers = append([]io.Closer{pout, perr}, writers...)
			out, errp = pout, perr
		}
		return out, errp
	})
	stop()
	return a.logsEnd(res, writers, o, gone)
}

// logsEnd closes what logs wrote through and turns its results into its
// exit: with one host, hints of where a read was cut and a job that ended
// said on a terminal; --follow ends with the jobs' status (jobsExit).
func (a *app) logsEnd(res []bgjob.Result[bgjob.LogResult], writers []io.Closer, o bgjob.LogOptions, gone func() bool) error {
	for _, w := range writers {
		// One host's text ends as it can: a reader that went away has
		// what it wanted.
		if err := w.Close(); err != nil && a.many() && !gone() && !(o.Follow && errors.Is(err, syscall.EPIPE)) {
			return err
		}
	}
	// The reader went (grep -m1): the watch saw it, or a write found it
	// gone before the watch did.
	left := gone() || o.Follow && slices.ContainsFunc(res, func(r bgjob.Result[bgjob.LogResult]) bool { return errors.Is(r.Err, syscall.EPIPE) })
	if left && o.Follow {
		// A write that found the reader gone is how the follow ends,
		// whether the watch saw it go first or not.
		pardonPipe(a.stdout)
	}
	if left && slices.ContainsFunc(res, func(r bgjob.Result[bgjob.LogResult]) bool { return r.Err != nil }) {
		// The reader has what it wanted (grep -m1), and the follows it
		// cut short: that is success.
		return nil
	}
	if r := res[0]; !a.many() {
		if r.Err != nil {
			return a.alone(r.Err)
		}
		a.cutHints(r.Value)
		if !o.Follow {
			return nil
		}
		a.endLines([]jobdir.Job{r.Value.Job})
	}
	if !o.Follow {
		return failures(a, res)
	}
	return followExit(a, res)
}

// followExit is the exit of logs --follow, with or without --json: the
// status of the jobs it followed (jobsExit).
func followExit(a *app, res []bgjob.Result[bgjob.LogResult]) error {
	jobs := make([]bgjob.Result[[]jobdir.Job], len(res))
	for i, r := range res {
		jobs[i] = bgjob.Result[[]jobdir.Job]{Host: r.Host, Err: r.Err}
		if r.Err == nil {
			jobs[i].Value = []jobdir.Job{r.Value.Job}
		}
	}
	return jobsExit(a, jobs)
}

// logsJSON prints logs --json: with one host the job and its logs (with
// --new, once read, before the cursor moves over them); with several, an
// object per host.
func (a *app) logsJSON(ctx context.Context, f *bgjob.Fleet, ref string, o bgjob.LogOptions, plain bool) error {
	var mu sync.Mutex
	bufs := map[string][2]*keptEnd{}
	// A follow's output is printed once the job ends: what it keeps is
	// the end of each log, --max-bytes of them together, not all it read
	// (with --new, whose cursor moves over what is printed, the first
	// read is cut instead).
	keep := int64(-1)
	if o.Follow && o.MaxBytes > 0 && o.Cursor == nil {
		keep, o.MaxBytes = o.MaxBytes, 0
	}
	emit := func(res bgjob.LogResult, b [2]*keptEnd) error {
		res, out, errs := keptLogs(res, b, keep)
		return printJSON(a.stdout, logsJSON(res, text(out, plain), text(errs, plain)))
	}
	printed := false
	if o.Cursor != nil && !a.many() {
		// The cursor moves over what was printed, once it is, and once
		// the reader has read all of it.
		defer quietPipe()()
		o.Cursor.Deliver = func(res bgjob.LogResult) error { printed = true; return emit(res, bufs[a.host]) }
		o.Cursor.Unread = unreadOf(a.stdout, a.stdout)
	}
	res := f.Logs(ctx, ref, o, func(host string) (io.Writer, io.Writer) {
		mu.Lock()
		defer mu.Unlock()
		b := [2]*keptEnd{{max: keep}, {max: keep}}
		bufs[host] = b
		return b[0], b[1]
	})
	if r := res[0]; !a.many() {
		if r.Err != nil || printed {
			return a.alone(r.Err)
		}
		if err := emit(r.Value, bufs[r.Host]); err != nil || !o.Follow {
			return err
		}
		return followExit(a, res)
	}
	if err := hostsJSON(a, res, func(h *hostJSON, r bgjob.Result[bgjob.LogResult]) {
		if r.Value.Job.ID != "" {
			v, out, errs := keptLogs(r.Value, bufs[r.Host], keep)
			jl := logsJSON(v, text(out, plain), text(errs, plain))
			h.Job, h.Logs = &v.Job, &jl.Logs
		}
	}); err != nil {
		return err
	}
	if o.Follow {
		return followExit(a, res)
	}
	return failures(a, res)
}

// unreadOf returns the bgjob.Cursor.Unread of a read whose stdout
// stream is written to out and stderr stream to errw: nil when neither is
// a pipe.
func unreadOf(out, errw io.Writer) func(string) (int64, bool) {
	o, e := pipeUnread(out), pipeUnread(errw)
	if o == nil && e == nil {
		return nil
	}
	return func(stream string) (int64, bool) {
		f := o
		if stream == "stderr" {
			f = e
		}
		if f == nil {
			return 0, false
		}
		return f()
	}
}

// allOrNothing is unread for a pipe of text made of the log bytes: any
// byte unread in it stands for every log byte written since the last
// report (a reader that goes gets them again, never loses them).
func allOrNothing(unread func(string) (int64, bool)) func(string) (int64, bool) {
	return func(stream string) (int64, bool) {
		n, gone := unread(stream)
		if n > 0 {
			n = math.MaxInt64 / 4
		}
		return n, gone
	}
}

// text returns log bytes, or with plain their text (termtext.Strip).
func text(b []byte, plain bool) []byte {
	if plain {
		return termtext.Strip(b)
	}
	return b
}

// cutHints says on stderr which logs a read began where the job's
// --max-log-size cap had dropped what came before (the text alone starts
// mid-line, with nothing to show that bytes are missing), and which a
// read cut to --max-bytes, and where to read on.
func (a *app) cutHints(res bgjob.LogResult) {
	for _, r := range res.Ranges {
		dropped := res.Job.StdoutDropped
		if r.Stream == "stderr" {
			dropped = res.Job.StderrDropped
		}
		if dropped > 0 && r.Offset == dropped {
			fmt.Fprintf(a.stderr, "bgjob: hint: %s: its first %d bytes were dropped by the job's --max-log-size; printed from byte %d\n", r.Stream, dropped, dropped)
		}
		if r.Truncated {
			fmt.Fprintf(a.stderr, "bgjob: hint: %s was cut at --max-bytes: printed bytes %d to %d; 'bgjob logs --offset N' reads any range\n", r.Stream, r.Offset, r.Next)
		}
	}
	if res.Job.LogsFull {
		fmt.Fprintf(a.stderr, "bgjob: hint: the file system of job %s's logs had no space left when its command ended: output may be missing\n", res.Job.ID)
	}
}

// keptEnd is where logs --json copies a log: all of it, or with max >= 0
// its last 2*max bytes at most, of which keptLogs prints max at most.
type keptEnd struct {
	max int64
	buf []byte
}

func (k *keptEnd) Write(p []byte) (int, error) {
	k.buf = append(k.buf, p...)
	if k.max >= 0 && int64(len(k.buf)) > 2*k.max {
		k.buf = append(k.buf[:0], k.buf[int64(len(k.buf))-k.max:]...)
	}
	return len(p), nil
}

// keptLogs returns res and the bytes of its two logs (stdout, stderr) as
// b kept them, cut, when keep >= 0, to keep bytes together: each log its
// end, from its first whole UTF-8 character, its range starting there
// and marked truncated. A log shorter than half of keep is kept whole,
// the other gets the rest.
func keptLogs(res bgjob.LogResult, b [2]*keptEnd, keep int64) (bgjob.LogResult, []byte, []byte) {
	out, errs := b[0].buf, b[1].buf
	if keep < 0 || int64(len(out)+len(errs)) <= keep {
		return res, out, errs
	}
	ne := min(int64(len(errs)), max(keep/2, keep-int64(len(out))))
	no := min(int64(len(out)), keep-ne)
	out, errs = utf8End(out, no), utf8End(errs, ne)
	res.Ranges = slices.Clone(res.Ranges)
	for i, r := range res.Ranges {
		n := int64(len(out))
		if r.Stream == "stderr" {
			n = int64(len(errs))
		}
		if r.Next-r.Offset > n {
			res.Ranges[i].Offset, res.Ranges[i].Truncated = r.Next-n, true
		}
	}
	return res, out, errs
}

// utf8End returns the last n bytes of p, less any that continue a UTF-8
// character begun before them (three at most).
func utf8End(p []byte, n int64) []byte {
	p = p[int64(len(p))-n:]
	for i := 0; i < 3 && len(p) > 0 && p[0]&0xC0 == 0x80; i++ {
		p = p[1:]
	}
	return p
}

// jobLogs is the --json shape of logs and run --wait: what a reader needs
// of the job, and the logs read.
type jobLogs struct {
	ID       string        `json:"id"`
	Name     string        `json:"name,omitempty"`
	Host     string        `json:"host,omitempty"`
	Status   jobdir.Status `json:"status"`
	ExitCode *int          `json:"exit_code"`
	Reason   string        `json:"reason,omitempty"`
	// LogsFull: the logs' file system was full as the command ended.
	LogsFull bool       `json:"logs_full,omitempty"`
	Logs     []logChunk `json:"logs"`
}

func logsJSON(res bgjob.LogResult, stdout, stderr []byte) jobLogs {
	chunks := []logChunk{}
	for _, r := range res.Ranges {
		data := stdout
		if r.Stream == "stderr" {
			data = stderr
		}
		chunks = append(chunks, logChunk{LogRange: r, Data: string(data)})
	}
	j := res.Job
	return jobLogs{ID: j.ID, Name: j.Name, Host: j.Host, Status: j.Status, ExitCode: j.ExitCode, Reason: j.Reason, LogsFull: j.LogsFull, Logs: chunks}
}

// rewound is the bgjob.LogOptions.Rewound (and WaitForOptions.Rewound) of
// a read of the job ref: it says on stderr, as tail -F does, that a log
// was found truncated and is read again from its start.
func (a *app) rewound(ref string) func(stream string) {
	return func(stream string) {
		fmt.Fprintf(a.stderr, "bgjob: warning: job %s: %s.log was truncated; reading it again from its start\n", ref, stream)
	}
}
