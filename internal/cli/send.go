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
	long, example := help("send")
	cmd := &cobra.Command{
		Use:     "send ID [DATA | -]",
		Short:   "Write to the stdin of a job started with --stdin",
		Long:    long,
		Example: example,
		Args:    needArgs(1, 2, "a job id or name, and the data (or - for stdin, or --eof)"),
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
