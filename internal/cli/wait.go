package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// exitTimeout is wait's exit status when its timeout expires, as timeout(1).
const exitTimeout = 124

func (a *app) waitCommand() *cobra.Command {
	var o bgjob.WaitOptions
	cmd := &cobra.Command{
		Use:   "wait ID...",
		Short: "Wait for jobs to end and exit with their status",
		Long: `Wait until the jobs have ended. The exit status is the job's own (the first
non-zero one of several jobs), 124 when --timeout expires, and 1 for a job
that was lost (its exit status is unknown). With several hosts it is the
largest of the hosts' (124 for a host whose wait timed out, 1 for a host
that failed), and each host whose job did not exit 0 gets a line on stderr;
--timeout bounds the whole wait.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Timeout < 0 {
				return usageError("--timeout must not be negative")
			}
			return a.wait(cmd.Context(), args, o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Timeout, "timeout", 0, "give up after this long and exit 124")
	f.BoolVar(&o.Any, "any", false, "return when the first job ends")
	f.BoolVar(&a.json, "json", false, "print the jobs as a JSON array")
	return cmd
}

func (a *app) wait(ctx context.Context, refs []string, o bgjob.WaitOptions) error {
	if a.many() {
		return a.fleetWait(ctx, refs, o)
	}
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	jobs, err := c.Wait(ctx, refs, o)
	if a.json && jobs != nil {
		if perr := printJSON(a.stdout, jobs); perr != nil {
			return perr
		}
	}
	if errors.Is(err, bgjob.ErrTimeout) {
		return &exitError{code: exitTimeout, err: err}
	}
	if err != nil {
		return err
	}
	return jobExit(a, jobs)
}

// jobExit turns ended jobs into bgjob's exit status: the first non-zero
// exit code, or 1 for a lost job (reported on stderr).
func jobExit(a *app, jobs []jobdir.Job) error {
	code := 0
	for _, j := range jobs {
		switch {
		case j.Status == jobdir.StatusLost:
			fmt.Fprintf(a.stderr, "bgjob: job %s was lost: it ended without recording an exit status\n", j.ID)
			if code == 0 {
				code = 1
			}
		case j.ExitCode != nil && *j.ExitCode != 0 && code == 0:
			code = *j.ExitCode
		}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}
