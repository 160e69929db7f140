package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
)

type stopOptions struct {
	bgjob.StopOptions
	refs       []string
	givenGrace time.Duration // --grace, as given (StopOptions.Grace once checked)
}

func (a *app) stopCommand() *cobra.Command {
	var o stopOptions
	long, _ := help("stop")
	cmd := &cobra.Command{
		Use:   "stop ID...",
		Short: "Stop jobs: signal their process group, then KILL after a grace period",
		Long:  long,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.All {
				return usageError("give job ids or names, or --all")
			}
			if len(args) > 0 && o.All {
				return usageError("--all takes no job ids")
			}
			g, err := graceFlag(o.givenGrace)
			if err != nil {
				return err
			}
			o.refs, o.Grace = args, &g
			return a.runStop(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Signal, "signal", "s", "TERM", "first signal to send (TERM, INT, QUIT, HUP, KILL, USR1, USR2, ALRM)")
	f.DurationVar(&o.givenGrace, "grace", bgjob.DefaultGrace, "time to wait before SIGKILL (0: KILL at once, no TERM)")
	f.BoolVar(&o.All, "all", false, "stop every job of the workspace that still runs")
	f.BoolVar(&a.json, "json", false, "print the stopped jobs as a JSON array")
	return cmd
}

// runStop stops the jobs o names (or all), each host's, and prints them
// as they ended.
func (a *app) runStop(ctx context.Context, o stopOptions) error {
	res := a.fleet(a.limit(stopGrace(o.Grace))).Stop(ctx, o.refs, o.StopOptions)
	if a.json {
		if err := jobsJSON(a, res); err != nil {
			return err
		}
		return failures(a, res)
	}
	for _, r := range res {
		for _, j := range r.Value {
			fmt.Fprintf(a.stdout, "%s%s\t%s\t%s\n", a.hostPrefix(r.Host), j.ID, statusText(j), jobtext.Exit(j))
		}
	}
	return failures(a, res)
}
