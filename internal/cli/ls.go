package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type listOptions struct {
	bgjob.ListOptions
	status string
}

func (a *app) listCommand() *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List jobs, newest first",
		Long: `List jobs, newest first. A page reads only the directory names and the files
of the jobs it shows. When more jobs remain, the last line (or next_cursor in
--json) gives the cursor for the next page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.status != "" {
				st, err := jobdir.ParseStatus(o.status)
				if err != nil {
					return usageError("--status: %v", err)
				}
				o.Status = st
			}
			if o.Limit < 0 {
				return usageError("--limit must not be negative")
			}
			return a.list(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.status, "status", "", "only jobs with this status (running, exited, killed, lost, unreadable)")
	f.StringVar(&o.Search, "search", "", "only jobs whose id, name or command contains this (case-insensitive)")
	f.IntVar(&o.Limit, "limit", 50, "page size (0: all)")
	f.StringVar(&o.Cursor, "cursor", "", "continue after a previous page")
	f.BoolVarP(&o.AllWorkspaces, "all-workspaces", "A", false, "list jobs of every workspace")
	f.BoolVar(&a.json, "json", false, "print a JSON object {jobs, next_cursor}")
	return cmd
}

func (a *app) list(ctx context.Context, o listOptions) error {
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	page, err := c.List(ctx, o.ListOptions)
	if err != nil && page.Jobs == nil {
		return err
	}
	if a.json {
		if perr := printJSON(a.stdout, page); perr != nil {
			return perr
		}
		return err
	}
	printTable(a.stdout, page.Jobs, o.AllWorkspaces)
	if page.Next != "" {
		fmt.Fprintf(a.stderr, "bgjob: more jobs: --cursor %s\n", page.Next)
	}
	return err
}
