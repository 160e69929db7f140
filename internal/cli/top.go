package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
)

type topOptions struct {
	all     bool
	noColor bool
	every   time.Duration
}

func (a *app) topCommand() *cobra.Command {
	var o topOptions
	long, example := help("top")
	cmd := &cobra.Command{
		Use:     "top",
		Short:   "A live view of the workspace's jobs: their state, output, stop and kill",
		Long:    long,
		Example: example,
		Args:    needArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("NO_COLOR") != "" {
				o.noColor = true
			}
			if o.every <= 0 {
				return usageError("--interval must be positive")
			}
			return a.runTop(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all-workspaces", "A", false, "show the jobs of every workspace")
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "no colour (also when NO_COLOR is set)")
	cmd.Flags().DurationVar(&o.every, "interval", DefaultTopInterval, "how often to read the jobs again (locally: to look for a wrapper gone)")
	return cmd
}

// runTop shows the jobs of the host in top until it ends.
func (a *app) runTop(ctx context.Context, o topOptions) error {
	if a.many() {
		return usageError("top shows the jobs of one host: give one -H host")
	}
	in, out, ok := a.terminals()
	if !ok {
		return usageError("top needs a terminal on stdin and stdout: 'bgjob ls' prints the jobs once")
	}
	c, release, err := a.connect(ctx, a.host)
	if err != nil {
		return err
	}
	defer release()
	return exitOf(full.Top(ctx, c, a.tty(in, out), TopOptions{All: o.all, NoColor: o.noColor, Interval: o.every}))
}
