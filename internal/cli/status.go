package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
)

type statusOptions struct {
	refs []string
}

func (a *app) statusCommand() *cobra.Command {
	var o statusOptions
	long, _ := help("status")
	cmd := &cobra.Command{
		Use:   "status [ID...]",
		Short: "Show what became of jobs",
		Long:  long,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.runList(cmd.Context(), listOptions{ListOptions: bgjob.ListOptions{Limit: 50}})
			}
			o.refs = args
			return a.runStatus(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&a.json, "json", false, "print a JSON array")
	return cmd
}

// runStatus prints the jobs o names, each host's.
func (a *app) runStatus(ctx context.Context, o statusOptions) error {
	res := a.fleet(a.limit(0)).StatusWith(ctx, bgjob.StatusOptions{Ports: true}, o.refs...)
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
