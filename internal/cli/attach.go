package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type attachOptions struct {
	ref       string
	keyName   string // --detach-key, as given
	detachKey byte   // the key keyName names
	stdin     bool
	stdinSet  bool // --stdin was given, true or false
}

func (a *app) attachCommand() *cobra.Command {
	var o attachOptions
	long, example := help("attach")
	cmd := &cobra.Command{
		Use:     "attach ID",
		Short:   "Attach the terminal to a job: see its output, type into it",
		Long:    long,
		Example: example,
		Args:    needArgs(1, 1, "a job id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := parseKey(o.keyName)
			if err != nil {
				return usageError("--detach-key: %v", err)
			}
			o.ref, o.detachKey = args[0], b
			o.stdinSet = cmd.Flags().Changed("stdin")
			return a.runAttach(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.keyName, "detach-key", `ctrl-\`, "the key that detaches from a --pty job, ctrl-a to ctrl-z, ctrl-\\, ctrl-], ctrl-^, ctrl-_ or ^X")
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

// runAttach attaches the terminal to the job o names, and says how the
// attach ended.
func (a *app) runAttach(ctx context.Context, o attachOptions) error {
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
	ended, endJob, err := full.Attach(ctx, c, job, a.tty(in, out), AttachOptions{DetachKey: o.detachKey, Stdin: o.stdin})
	if err != nil {
		return exitOf(err)
	}
	nl := ""
	if job.PTY {
		nl = "\r\n"
	}
	if !ended {
		fmt.Fprintf(a.stderr, "%sbgjob: detached from job %s, which runs on ('bgjob attach %s' comes back)\n", nl, job.ID, job.ID)
		return nil
	}
	fmt.Fprint(out, nl)
	a.endLines([]jobdir.Job{endJob})
	return jobsExit(a, []bgjob.Result[[]jobdir.Job]{{Host: a.host, Value: []jobdir.Job{endJob}}})
}

// tty is the terminal in and out, for top and attach: stderr and the
// host's errors as the command line says them.
func (a *app) tty(in, out *os.File) Terminal {
	return Terminal{In: in, Out: out, Stderr: a.stderr, HostError: a.alone}
}

// exitOf is an error of top or attach with its exit status (tui.ExitError):
// a hang-up (129), or a terminal top could not take back (1).
func exitOf(err error) error {
	var te interface {
		error
		ExitCode() int
	}
	if errors.As(err, &te) {
		return &exitError{code: te.ExitCode(), err: errors.Unwrap(te)}
	}
	return err
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
