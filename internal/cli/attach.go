package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// attachReplay is how many lines of a job's output attach replays (at
// most attachReplayBytes) before it follows: enough to redraw a prompt
// or a screenful.
const (
	attachReplay      = 100
	attachReplayBytes = 64 << 10
)

type attachOptions struct {
	ref       string
	detachKey byte
	keyName   string
	stdin     bool
	stdinSet  bool // --stdin was given, true or false
}

func (a *app) attachCommand() *cobra.Command {
	var (
		o   attachOptions
		key string
	)
	cmd := &cobra.Command{
		Use:   "attach ID",
		Short: "Attach the terminal to a job: see its output, type into it",
		Long: fmt.Sprintf(`Attach this terminal to a running job, as dtach and abduco do.

On a job started with --pty the terminal goes raw: the last %d lines of the
job's output (at most %d KiB) are replayed so its prompt or screen shows,
then its output follows as it comes, and every key typed goes to the job as
it is typed: Ctrl-C, Ctrl-Z and Ctrl-D are keys for the job's program, not
signals to bgjob. The job's terminal takes this terminal's size, and a
change of the window's size reaches the job (SIGWINCH, and the new size on
its terminal). Ctrl-\ detaches (--detach-key changes the key: ctrl-a to
ctrl-z, ctrl-\, ctrl-], ctrl-^, ctrl-_, or ^X): the job runs on, and attach
exits 0.

On a job without a PTY attach follows both logs, as 'bgjob logs -f' does,
and the terminal is not raw: on a job started with --stdin each line typed
is sent to the job's stdin (--stdin=false only watches); Ctrl-\ detaches
and Ctrl-C ends attach, never the job.

When the job ends, attach restores the terminal, says how the job ended and
exits with its status, as wait does. Several clients may attach to a job at
once: all see its output, and their keys reach the job interleaved, as they
arrive. attach never moves a 'logs --new' cursor.

Over SSH (-H host) attach holds one session for the keys, which a script
on the host copies into the job's stdin, and one for the output; a resize
runs one script. One job on one host at a time: several -H hosts are
refused. stdin and stdout must be a terminal; a program types into a job
with 'bgjob send' and reads it with 'bgjob logs -f'.`, attachReplay, attachReplayBytes>>10),
		Example: `  bgjob run --pty -n repl -- python3 -i
  bgjob attach repl                      # Ctrl-\ detaches
  bgjob attach --detach-key ctrl-] repl
  bgjob attach worker                    # a job run with --stdin: lines typed go to it`,
		Args: needArgs(1, 1, "a job id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := parseKey(key)
			if err != nil {
				return usageError("--detach-key: %v", err)
			}
			o.ref, o.detachKey, o.keyName = args[0], b, key
			o.stdinSet = cmd.Flags().Changed("stdin")
			return a.attach(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "detach-key", `ctrl-\`, "the key that detaches from a --pty job, ctrl-a to ctrl-z, ctrl-\\, ctrl-], ctrl-^, ctrl-_ or ^X")
	f.BoolVar(&o.stdin, "stdin", false, "on a job without a PTY, send each line typed to its stdin (a job run with --stdin: the default there; --stdin=false only watches)")
	return cmd
}

// parseKey reads a control key: "ctrl-X" or "^X" for X a letter or one of
// @[\]^_, or a single byte.
func parseKey(s string) (byte, error) {
	k := s
	switch {
	case strings.HasPrefix(strings.ToLower(k), "ctrl-"):
		k = k[len("ctrl-"):]
	case strings.HasPrefix(k, "^") && len(k) == 2:
		k = k[1:]
	default:
		return 0, fmt.Errorf("%q is not a control key (want ctrl-X or ^X, e.g. ctrl-\\ or ^])", s)
	}
	if len(k) != 1 {
		return 0, fmt.Errorf("%q is not a control key (want ctrl-X or ^X, e.g. ctrl-\\ or ^])", s)
	}
	c := k[0]
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	if c < '@' || c > '_' {
		return 0, fmt.Errorf("%q is not a control key (want ctrl-X or ^X, e.g. ctrl-\\ or ^])", s)
	}
	return c - '@', nil
}

// terminals returns stdin and stdout as files when both are terminals.
func (a *app) terminals() (in, out *os.File, ok bool) {
	in, ok1 := a.stdin.(*os.File)
	out, ok2 := fileOf(a.stdout)
	if !ok1 || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil, nil, false
	}
	return in, out, true
}

func (a *app) attach(ctx context.Context, o attachOptions) error {
	if a.many() {
		return usageError("attach works on one job of one host: give one -H host")
	}
	in, out, ok := a.terminals()
	if !ok {
		return usageError("attach needs a terminal on stdin and stdout: type into a job with 'bgjob send ID DATA' and read it with 'bgjob logs -f ID'")
	}
	c, release, err := a.connect(ctx, a.host)
	if err != nil {
		return err
	}
	defer release()
	jobs, err := c.Status(ctx, o.ref)
	if err != nil {
		return a.alone(err)
	}
	job := jobs[0]
	switch {
	case job.PTY:
		o.stdin = true
	case o.stdin && !job.Stdin:
		return fmt.Errorf("job %s was not started with --stdin: attach --stdin has nowhere to send lines", job.ID)
	case job.Stdin && !o.stdinSet:
		// A job that reads its stdin gets the lines typed, as a --pty
		// job gets the keys: typed and echoed, they went nowhere, and
		// the shell read them after the detach.
		o.stdin = true
	}
	s := &attachSession{a: a, c: c, job: job, o: o, in: in, out: out}
	end, err := s.run(ctx)
	if err != nil {
		return err
	}
	nl := ""
	if job.PTY {
		nl = "\r\n"
	}
	if !end.ended {
		fmt.Fprintf(a.stderr, "%sbgjob: detached from job %s, which runs on ('bgjob attach %s' comes back)\n", nl, job.ID, job.ID)
		return nil
	}
	fmt.Fprint(s.out, nl)
	a.endLines([]jobdir.Job{end.job})
	return jobsExit(a, []bgjob.Result[[]jobdir.Job]{{Host: a.host, Value: []jobdir.Job{end.job}}})
}

// attachSession is one attach: the job, its output followed to the
// terminal, and what is typed sent to it.
type attachSession struct {
	a       *app
	c       *bgjob.Client
	job     jobdir.Job
	o       attachOptions
	in, out *os.File
}

// attachEnd is how an attach ended: detached, the job running on, or
// with the job's end (ended, and the job as it ended).
type attachEnd struct {
	ended bool
	job   jobdir.Job
}

// logsDone is how a follow ended.
type logsDone struct {
	res bgjob.LogResult
	err error
}

// run attaches until the detach key, the job's end, SIGHUP or the end of
// ctx, and restores the terminal; it says nothing of how it ended.
func (s *attachSession) run(ctx context.Context) (_ attachEnd, err error) {
	a, job := s.a, s.job
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	restore := func() {}
	if job.PTY {
		state, err := term.MakeRaw(int(s.in.Fd()))
		if err != nil {
			return attachEnd{}, fmt.Errorf("making the terminal raw: %w", err)
		}
		restored := false
		restore = func() {
			if !restored {
				restored = true
				term.Restore(int(s.in.Fd()), state)
			}
		}
		defer restore()
		s.resize(ctx)
		// Clear the screen; the replay redraws the job's.
		fmt.Fprint(s.out, "\x1b[H\x1b[2J")
	}

	// The output: the log's tail, then what comes, until the job ends.
	var errw io.Writer = a.stderr
	if job.PTY {
		errw = crlfWriter{a.stderr}
	}
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	ended := make(chan logsDone, 1)
	go func() {
		res, err := s.c.Logs(lctx, job.ID, bgjob.LogOptions{Tail: attachReplay, MaxBytes: attachReplayBytes, Follow: true, Interactive: true}, s.out, errw)
		ended <- logsDone{res, err}
	}()

	// The input: keys (or lines) through one Send, which streams them.
	detached := make(chan struct{})
	var keys *keyReader
	var pw *io.PipeWriter
	sent := make(chan error, 1)
	if s.o.stdin {
		keys, err = newKeyReader(s.in)
		if err != nil {
			return attachEnd{}, err
		}
		defer keys.Close()
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		go func() {
			_, err := s.c.Send(ctx, job.ID, pr, bgjob.SendOptions{})
			pr.CloseWithError(errors.Join(err, io.ErrClosedPipe))
			sent <- err
		}()
		go s.type_(keys, pw, detached)
	}

	winch := make(chan os.Signal, 1)
	defer notifyResize(winch)()
	quit := make(chan os.Signal, 1)
	if !job.PTY {
		defer notifyQuit(quit)()
	}
	hup := make(chan os.Signal, 1)
	defer notifyHangup(hup)()

	// end stops the input and the output; the job runs on.
	end := func() {
		if keys != nil {
			keys.Close()
			pw.Close()
			select {
			case <-sent:
			case <-time.After(attachSendGrace):
			}
		}
		lcancel()
		<-ended
	}
	for {
		select {
		case <-winch:
			if job.PTY {
				s.resize(ctx)
			}
		case <-detached:
			end()
			restore()
			return attachEnd{}, nil
		case <-quit:
			end()
			restore()
			return attachEnd{}, nil
		case <-hup:
			end()
			restore()
			return attachEnd{}, &exitError{code: 129}
		case <-ctx.Done():
			end()
			restore()
			return attachEnd{}, ctx.Err()
		case d := <-ended:
			ended <- d
			end()
			restore()
			if d.err != nil {
				return attachEnd{}, a.alone(d.err)
			}
			return attachEnd{ended: true, job: d.res.Job}, nil
		}
	}
}

// type_ copies what is typed to w until the detach key (closing detached)
// or the end of input; on a job without a PTY, a line at a time, as the
// terminal hands them over.
func (s *attachSession) type_(keys io.Reader, w *io.PipeWriter, detached chan<- struct{}) {
	buf := make([]byte, 4096)
	for {
		n, err := keys.Read(buf)
		if n > 0 {
			b := buf[:n]
			i := -1
			if s.job.PTY {
				i = bytes.IndexByte(b, s.o.detachKey)
			}
			if i >= 0 {
				if i > 0 {
					w.Write(b[:i])
				}
				close(detached)
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
		}
		if err != nil || n == 0 {
			// The end of input (Ctrl-D on a line of its own without a
			// PTY): nothing more is sent; the output goes on.
			return
		}
	}
}

// resize gives the job's terminal the size of this one; a job started by
// an earlier bgjob, which records no terminal, keeps its size.
func (s *attachSession) resize(ctx context.Context) {
	cols, rows, err := term.GetSize(int(s.out.Fd()))
	if err != nil {
		return
	}
	s.c.Resize(ctx, s.job.ID, cols, rows)
}

// crlfWriter writes "\n" as "\r\n", for text written to a raw terminal.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
