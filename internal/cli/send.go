package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) sendCommand() *cobra.Command {
	var eof bool
	cmd := &cobra.Command{
		Use:   "send ID [DATA | -]",
		Short: "Write to the stdin of a job started with --stdin",
		Long: `Write DATA (exactly, no newline added), or with "-" bgjob's own stdin, to the
standard input of a job started with 'bgjob run --stdin'. --eof closes the
job's stdin, so it reads end of file.`,
		Example: `  bgjob send repl $'print(6*7)\n'
  printf 'quit\n' | bgjob send repl -
  bgjob send --eof repl`,
		Args: cobra.RangeArgs(1, 2),
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
			return a.send(cmd.Context(), args[0], data, eof)
		},
	}
	cmd.Flags().BoolVar(&eof, "eof", false, "close the job's stdin")
	return cmd
}

func (a *app) send(ctx context.Context, ref string, data io.Reader, eof bool) error {
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = c.Send(ctx, ref, data, eof)
	return err
}
