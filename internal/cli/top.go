package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob/internal/tui"
)

type topOptions struct {
	all     bool
	noColor bool
	every   time.Duration
}

func (a *app) topCommand() *cobra.Command {
	var o topOptions
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live view of the workspace's jobs: their state, output, stop and kill",
		Long: `Show the jobs of the workspace (-A: of every workspace) in a table, name,
id, status, exit code, live processes, duration and command, newest
first, kept current. On this machine file events say when a job is made,
ends or is removed; every second (--interval) top looks, without running
a script, for a running job's wrapper gone without one (killed with
KILL), and every ten seconds (or --interval, when longer) it counts again
the live processes of the jobs that may still change. Over SSH the whole
table is read every second. A job that ends changes on screen at once
locally, within two seconds over SSH.

Keys: j and k or the arrows move; / filters by name, id or command (enter
keeps the filter, esc drops it); enter shows the job's output, plain text,
followed (esc goes back); a attaches to a job run with --pty, as 'bgjob
attach' does, and Ctrl-\ detaches and comes back to top, as does the
job's end; s stops the selected job after a y/n confirmation (TERM, then
KILL after the grace) and K kills it (KILL) after one; ? shows the keys;
q quits. top never moves a 'logs --new' cursor.

The terminal is restored however top ends: q, an error, a panic, SIGTERM
or SIGHUP. Colour marks the status unless NO_COLOR is set or --no-color is
given; the selected row is shown reversed. stdin and stdout must be a
terminal; 'bgjob ls' prints the table once.`,
		Example: `  bgjob top
  bgjob top -A
  bgjob -H build-host top`,
		Args: needArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("NO_COLOR") != "" {
				o.noColor = true
			}
			if o.every <= 0 {
				return usageError("--interval must be positive")
			}
			return a.top(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all-workspaces", "A", false, "show the jobs of every workspace")
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "no colour (also when NO_COLOR is set)")
	cmd.Flags().DurationVar(&o.every, "interval", tui.DefaultInterval, "how often to read the jobs again (locally: to look for a wrapper gone)")
	return cmd
}

func (a *app) top(ctx context.Context, o topOptions) error {
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
	return exitOf(tui.Top(ctx, c, a.tty(in, out), tui.TopOptions{All: o.all, NoColor: o.noColor, Interval: o.every}))
}
