package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"

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
--json) gives the cursor for the next page.

OWNER says which jobs an agent started: mcp:PID for a job a bgjob mcp
server started (its pid; mcp:PID@HOST when the server ran on another
machine, ",keep" when the job outlives the server), "-" for the others.
--json carries the whole owner object (docs/format.md).`,
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

func (a *app) list(ctx context.Context, o listOptions) (err error) {
	if a.many() {
		return a.fleetList(ctx, o)
	}
	ctx, end := a.within(ctx, 0)
	defer func() { err = end(err) }()
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	if a.json {
		// Stream the array: a workspace of 10,000 jobs is never held whole.
		w := &jsonList{w: a.stdout, indent: isTerminal(a.stdout)}
		next, err := c.ListFunc(ctx, o.ListOptions, w.add)
		if werr := w.close(next); werr != nil {
			return werr
		}
		return err
	}
	t := newTable(a.stdout, o.AllWorkspaces)
	rows := 0
	next, err := c.ListFunc(ctx, o.ListOptions, func(j jobdir.Job) error {
		t.row(j)
		rows++
		return nil
	})
	if err == nil || rows > 0 {
		t.flush()
	}
	if next != "" {
		fmt.Fprintf(a.stderr, "bgjob: more jobs: --cursor %s\n", next)
	}
	return err
}

// jsonList writes {"jobs": [...], "next_cursor": ...} one job at a time,
// in the layout printJSON gives the whole object: one line, or indented
// on a terminal.
type jsonList struct {
	w      io.Writer
	indent bool
	n      int
}

func (l *jsonList) add(j jobdir.Job) error {
	var b bytes.Buffer
	if err := encodeJSON(&b, j, "    ", l.indent); err != nil {
		return err
	}
	sep := `{"jobs":[`
	switch {
	case l.indent && l.n == 0:
		sep = "{\n  \"jobs\": [\n    "
	case l.indent:
		sep = ",\n    "
	case l.n > 0:
		sep = ","
	}
	l.n++
	_, err := fmt.Fprintf(l.w, "%s%s", sep, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return err
}

func (l *jsonList) close(next string) error {
	var end string
	switch {
	case l.indent && l.n == 0:
		end = "{\n  \"jobs\": []"
	case l.indent:
		end = "\n  ]"
	case l.n == 0:
		end = `{"jobs":[]`
	default:
		end = "]"
	}
	if next != "" {
		if l.indent {
			end += fmt.Sprintf(",\n  \"next_cursor\": %q\n", next)
		} else {
			end += fmt.Sprintf(`,"next_cursor":%q`, next)
		}
	} else if l.indent {
		end += "\n"
	}
	_, err := fmt.Fprintf(l.w, "%s}\n", end)
	return err
}
