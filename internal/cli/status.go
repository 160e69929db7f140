package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
)

func (a *app) statusCommand() *cobra.Command {
	long, _ := help("status")
	cmd := &cobra.Command{
		Use:   "status [ID...]",
		Short: "Show what became of jobs",
		Long:  long,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.list(cmd.Context(), listOptions{ListOptions: bgjob.ListOptions{Limit: 50}})
			}
			return a.status(cmd.Context(), args)
		},
	}
	cmd.Flags().BoolVar(&a.json, "json", false, "print a JSON array")
	return cmd
}

func (a *app) status(ctx context.Context, refs []string) error {
	res := a.fleet(a.limit(0)).Status(ctx, refs...)
	if a.json {
		if err := jobsJSON(a, res); err != nil {
			return err
		}
		return failures(a, res)
	}
	n := 0
	for _, r := range res {
		for _, j := range r.Value {
			if n > 0 {
				fmt.Fprintln(a.stdout)
			}
			printJob(a.stdout, j)
			n++
		}
	}
	return failures(a, res)
}
