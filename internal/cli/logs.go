package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
)

func (a *app) logsCommand() *cobra.Command {
	var o bgjob.LogOptions
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's output",
		Long: `Print a job's stdout (or --stderr) exactly as written, binary-safe.
--tail reads from the end of the file without loading it; --follow keeps
printing new output until the job ends.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Tail < 0 {
				return usageError("--tail must not be negative")
			}
			return a.logs(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Stderr, "stderr", false, "print stderr.log instead of stdout.log")
	f.IntVar(&o.Tail, "tail", 0, "print only the last N lines")
	f.BoolVarP(&o.Follow, "follow", "f", false, "keep printing until the job ends")
	return cmd
}

func (a *app) logs(ctx context.Context, ref string, o bgjob.LogOptions) error {
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	return c.Logs(ctx, ref, o, a.stdout)
}
