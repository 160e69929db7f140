package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
)

type runOptions struct {
	spec  bgjob.Spec
	quiet bool
}

func (a *app) runCommand() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Start a command as a detached background job",
		Long: `Start a command as a detached background job and return as soon as it runs.

One argument is a shell script, run with --shell ("sh -c" semantics):
  bgjob run -- 'make test 2>&1 | tee build.txt'
Several arguments are an argv, each word passed exactly:
  bgjob run -- python3 -m http.server 8000

The job runs in its own session and process group with HUP ignored and stdin
from /dev/null; its output is appended to stdout.log and stderr.log in the job
directory, and its exit status (128+N when signal N killed it) to exit_code.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.spec.Argv = args
			if o.spec.Cwd == "" && a.host == "" {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("finding the working directory: %w", err)
				}
				o.spec.Cwd = wd
			}
			return a.run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.spec.Name, "name", "n", "", "name the job (address it by name later)")
	f.StringVarP(&o.spec.Cwd, "cwd", "C", "", "working directory (must exist; default: the current one, or home over SSH)")
	f.StringArrayVarP(&o.spec.Env, "env", "e", nil, "set an environment variable, NAME=VALUE (repeatable)")
	f.StringVar(&o.spec.Shell, "shell", "", "shell that runs a script command (default: bash if present, else sh)")
	f.DurationVar(&o.spec.Timeout, "timeout", 0, "stop the job after this long (TERM, then KILL after --grace)")
	f.DurationVar(&o.spec.Grace, "grace", bgjob.DefaultGrace, "with --timeout, time between TERM and KILL")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only the job id")
	f.BoolVar(&a.json, "json", false, "print the job as JSON")
	return cmd
}

func (a *app) run(ctx context.Context, o runOptions) error {
	if o.spec.Timeout < 0 || o.spec.Grace < 0 {
		return usageError("--timeout and --grace must not be negative")
	}
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	j, err := c.Run(ctx, o.spec)
	if err != nil {
		return err
	}
	switch {
	case a.json:
		return printJSON(a.stdout, j)
	case o.quiet:
		fmt.Fprintln(a.stdout, j.ID)
	default:
		fmt.Fprintf(a.stdout, "id:     %s\npid:    %d\nstdout: %s\nstderr: %s\n", j.ID, j.PID, j.StdoutPath, j.StderrPath)
	}
	return nil
}
