package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type sendOptions struct {
	bgjob.SendOptions
	ref  string
	data io.Reader // nil with --eof
}

func (a *app) sendCommand() *cobra.Command {
	var o sendOptions
	long, example := help("send")
	cmd := &cobra.Command{
		Use:     "send ID [DATA | -]",
		Short:   "Write to the stdin of a job started with --stdin",
		Long:    long,
		Example: example,
		Args:    needArgs(1, 2, "a job id or name, and the data (or - for stdin, or --eof)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.EOF && len(args) == 2:
				return usageError("--eof takes no data")
			case !o.EOF && len(args) == 1:
				return usageError("give DATA, or - to read it from stdin, or --eof")
			}
			o.ref = args[0]
			if len(args) == 2 {
				o.data = strings.NewReader(args[1])
				if args[1] == "-" {
					o.data = a.stdin
				}
			}
			if o.Timeout < 0 || o.Timeout > maxDuration {
				return usageError("--timeout must be between 0 and %s", maxDuration)
			}
			return a.runSend(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.EOF, "eof", false, "close the job's stdin")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "give up when the job has not taken the data after this long (0: wait while it runs, within --host-timeout)")
	return cmd
}

// runSend writes o's data to the stdin of the job o names, on each host
// (or closes it, --eof).
func (a *app) runSend(ctx context.Context, o sendOptions) error {
	f := a.fleet(a.limit(o.Timeout))
	if a.many() {
		// Every host gets all of data: the fleet reads it first.
		return failures(a, f.Send(ctx, o.ref, o.data, o.SendOptions))
	}
	// One host's data streams, within the host's deadline.
	return failures(a, bgjob.Each(ctx, f, func(ctx context.Context, _ string, c *bgjob.Client) (jobdir.Job, error) {
		return c.Send(ctx, o.ref, o.data, o.SendOptions)
	}))
}
