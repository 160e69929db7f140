package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// AttachReplay is how many lines of a job's output attach replays (at
// most AttachReplayBytes) before it follows: enough to redraw a prompt
// or a screenful.
const (
	AttachReplay      = 100
	AttachReplayBytes = 64 << 10
)

// AttachOptions are how Attach works.
type AttachOptions struct {
	// DetachKey is the key that detaches from a job run with --pty (the
	// command line's --detach-key).
	DetachKey byte
	// Stdin sends what is typed to the job: the keys on a job run with
	// --pty, each line on one without.
	Stdin bool
}

// AttachEnd is how an attach ended: detached, the job running on, or
// with the job's end (Ended, and Job as it ended).
type AttachEnd struct {
	Ended bool
	Job   jobdir.Job
}

// Attach attaches tty to job, reached through c, until the detach key,
// the job's end, SIGHUP (an *ExitError of status 129) or the end of ctx,
// and restores the terminal; it says nothing of how it ended, which the
// caller says.
func Attach(ctx context.Context, c *bgjob.Client, job jobdir.Job, tty Terminal, o AttachOptions) (AttachEnd, error) {
	s := &attachSession{c: c, job: job, o: o, tty: tty}
	return s.run(ctx)
}

// attachSession is one attach: the job, its output followed to the
// terminal, and what is typed sent to it.
type attachSession struct {
	c   *bgjob.Client
	job jobdir.Job
	o   AttachOptions
	tty Terminal
}

// logsDone is how a follow ended.
type logsDone struct {
	res bgjob.LogResult
	err error
}

// run attaches until the detach key, the job's end, SIGHUP or the end of
// ctx, and restores the terminal; it says nothing of how it ended.
func (s *attachSession) run(ctx context.Context) (_ AttachEnd, err error) {
	job := s.job
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	restore := func() {}
	if job.PTY {
		state, err := term.MakeRaw(int(s.tty.In.Fd()))
		if err != nil {
			return AttachEnd{}, fmt.Errorf("making the terminal raw: %w", err)
		}
		restored := false
		restore = func() {
			if !restored {
				restored = true
				term.Restore(int(s.tty.In.Fd()), state)
			}
		}
		defer restore()
		s.resize(ctx)
		// Clear the screen; the replay redraws the job's.
		fmt.Fprint(s.tty.Out, "\x1b[H\x1b[2J")
	}

	// The output: the log's tail, then what comes, until the job ends.
	var errw io.Writer = s.tty.Stderr
	if job.PTY {
		errw = crlfWriter{s.tty.Stderr}
	}
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	ended := make(chan logsDone, 1)
	go func() {
		res, err := s.c.Logs(lctx, job.ID, bgjob.LogOptions{Tail: AttachReplay, MaxBytes: AttachReplayBytes, Follow: true, Interactive: true}, s.tty.Out, errw)
		ended <- logsDone{res, err}
	}()

	// The input: keys (or lines) through one Send, which streams them.
	detached := make(chan struct{})
	var keys *keyReader
	var pw *io.PipeWriter
	sent := make(chan error, 1)
	if s.o.Stdin {
		keys, err = newKeyReader(s.tty.In)
		if err != nil {
			return AttachEnd{}, err
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
			return AttachEnd{}, nil
		case <-quit:
			end()
			restore()
			return AttachEnd{}, nil
		case <-hup:
			end()
			restore()
			return AttachEnd{}, &ExitError{Code: 129}
		case <-ctx.Done():
			end()
			restore()
			return AttachEnd{}, ctx.Err()
		case d := <-ended:
			ended <- d
			end()
			restore()
			if d.err != nil {
				return AttachEnd{}, s.tty.hostError(d.err)
			}
			return AttachEnd{Ended: true, Job: d.res.Job}, nil
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
				i = bytes.IndexByte(b, s.o.DetachKey)
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
	cols, rows, err := term.GetSize(int(s.tty.Out.Fd()))
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
