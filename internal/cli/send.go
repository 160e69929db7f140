package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

func (a *app) sendCommand() *cobra.Command {
	var (
		eof     bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "send ID [DATA | -]",
		Short: "Write to the stdin of a job started with --stdin",
		Long: `Write DATA (exactly, no newline added), or with "-" bgjob's own stdin, to the
standard input of a job started with 'bgjob run --stdin'. --eof closes the
job's stdin, so it reads end of file.

A job started with 'bgjob run --pty' gets the bytes typed into its terminal,
which echoes them into its output as a terminal echoes keys (unless the
command turned echo off), and control characters act as keys do: $'\x03'
is Ctrl-C (SIGINT to the command), $'\x1b[A' the up arrow; --eof is
Ctrl-D. So data is not sent
as is: the terminal's line discipline edits it first (\r becomes \n, ^C,
^\, ^D, ^U, ^W, ^V and DEL act), and while the command reads lines (the
canonical mode, unless it set the terminal raw) a line keeps at most 4095
bytes: the kernel drops the rest of a longer one, up to its newline, and
send still succeeds. For binary or long-line data use --stdin, not --pty.
--eof is one Ctrl-D: after a line not ended it only ends that line, as on a
terminal (send $'\x04' first for a real end of file), and the terminal
then takes no more input: a later send is refused.

send returns once the job has taken all the data. It fails when the job
ends before it has read it all (it may have read a part), or after
--timeout; either way nothing of the send is left running. The whole send, reading stdin included, is bounded by
--host-timeout with --timeout on top: for a long stream, set
--host-timeout 0.`,
		Example: `  bgjob send repl $'print(6*7)\n'
  printf 'quit\n' | bgjob send repl -
  bgjob send --eof repl
  bgjob send shell $'\x03'                 # Ctrl-C to a job run with --pty`,
		Args: needArgs(1, 2, "a job id or name, and the data (or - for stdin, or --eof)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case eof && len(args) == 2:
				return usageError("--eof takes no data")
			case !eof && len(args) == 1:
				return usageError("give DATA, or - to read it from stdin, or --eof")
			}
			var data io.Reader
			if len(args) == 2 {
				data = strings.NewReader(args[1])
				if args[1] == "-" {
					data = a.stdin
				}
			}
			if timeout < 0 || timeout > maxDuration {
				return usageError("--timeout must be between 0 and %s", maxDuration)
			}
			return a.send(cmd.Context(), args[0], data, bgjob.SendOptions{EOF: eof, Timeout: timeout})
		},
	}
	cmd.Flags().BoolVar(&eof, "eof", false, "close the job's stdin")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up when the job has not taken the data after this long (0: wait while it runs, within --host-timeout)")
	return cmd
}

func (a *app) send(ctx context.Context, ref string, data io.Reader, o bgjob.SendOptions) error {
	f := a.fleet(a.limit(o.Timeout))
	if a.many() {
		// Every host gets all of data: the fleet reads it first.
		return failures(a, f.Send(ctx, ref, data, o))
	}
	// One host's data streams, within the host's deadline.
	return failures(a, bgjob.Each(ctx, f, func(ctx context.Context, _ string, c *bgjob.Client) (jobdir.Job, error) {
		return c.Send(ctx, ref, data, o)
	}))
}
