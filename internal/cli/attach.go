package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/tui"
	"github.com/bgjob/bgjob/jobdir"
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
with 'bgjob send' and reads it with 'bgjob logs -f'.`, tui.AttachReplay, tui.AttachReplayBytes>>10),
		Example: `  bgjob run --pty -n repl -- python3 -i
  bgjob attach repl                      # Ctrl-\ detaches
  bgjob attach --detach-key ctrl-] repl
  bgjob attach worker                    # a job run with --stdin: lines typed go to it`,
		Args: needArgs(1, 1, "a job id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := tui.ParseKey(key)
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
	end, err := tui.Attach(ctx, c, job, a.tty(in, out), tui.AttachOptions{DetachKey: o.detachKey, Stdin: o.stdin})
	if err != nil {
		return exitOf(err)
	}
	nl := ""
	if job.PTY {
		nl = "\r\n"
	}
	if !end.Ended {
		fmt.Fprintf(a.stderr, "%sbgjob: detached from job %s, which runs on ('bgjob attach %s' comes back)\n", nl, job.ID, job.ID)
		return nil
	}
	fmt.Fprint(out, nl)
	a.endLines([]jobdir.Job{end.Job})
	return jobsExit(a, []bgjob.Result[[]jobdir.Job]{{Host: a.host, Value: []jobdir.Job{end.Job}}})
}

// tty is the terminal in and out, for top and attach: stderr and the
// host's errors as the command line says them.
func (a *app) tty(in, out *os.File) tui.Terminal {
	return tui.Terminal{In: in, Out: out, Stderr: a.stderr, HostError: a.alone}
}

// exitOf is an error of top or attach with its exit status: a hang-up
// (129), or a terminal top could not take back (1).
func exitOf(err error) error {
	var te *tui.ExitError
	if errors.As(err, &te) {
		return &exitError{code: te.Code, err: te.Err}
	}
	return err
}
