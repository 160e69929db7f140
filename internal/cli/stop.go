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
	labels     []string
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
			var err error
			if o.Labels, err = parseLabels(o.labels); err != nil {
				return err
			}
			if len(args) == 0 && !o.All && len(o.Labels) == 0 {
				return usageError("give job ids or names, --label or --all")
			}
			if countTrue(len(args) > 0, o.All, len(o.Labels) > 0) > 1 {
				return usageError("give job ids or names, --label or --all: one of them")
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
	f.StringArrayVar(&o.labels, "label", nil, "stop the jobs of the workspace that still run and have this label, "+labelHelp+"; all given must match")
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
