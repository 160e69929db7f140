package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type listOptions struct {
	bgjob.ListOptions
	status string
	labels []string
}

func (a *app) listCommand() *cobra.Command {
	var o listOptions
	long, _ := help("ls")
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List jobs, newest first",
		Long:    long,
		Args:    cobra.NoArgs,
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
			var err error
			if o.Labels, err = parseLabels(o.labels); err != nil {
				return err
			}
			return a.runList(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.status, "status", "", "only jobs with this status (running, queued, exited, killed, lost, not_run or unreadable)")
	labelFilter(f, &o.labels)
	f.StringVar(&o.Search, "search", "", "only jobs whose id, name or command contains this (case-insensitive)")
	f.IntVar(&o.Limit, "limit", 50, "page size (0: all)")
	f.StringVar(&o.Cursor, "cursor", "", "continue after a previous page")
	f.BoolVarP(&o.AllWorkspaces, "all-workspaces", "A", false, "list jobs of every workspace")
	f.BoolVar(&a.json, "json", false, "print a JSON object {jobs, next_cursor}")
	return cmd
}

// runList prints a page of jobs: one host's as they come, several hosts'
// once all have answered, each with its host.
func (a *app) runList(ctx context.Context, o listOptions) error {
	f := a.fleet(a.limit(0))
	// The ports of the jobs are shown in JSON only: the table has no
	// column for them, and they cost a look at each job's processes.
	o.Ports = a.json
	switch {
	case a.many():
		return a.listHosts(ctx, f, o)
	case a.json:
		return a.streamJSON(ctx, f, o)
	}
	return a.streamTable(ctx, f, o)
}

// streamJSON prints one host's page as a JSON object, a job at a time:
// a workspace of 10,000 jobs is never held whole.
func (a *app) streamJSON(ctx context.Context, f *bgjob.Fleet, o listOptions) error {
	w := &jsonList{w: a.stdout, indent: isTerminal(a.stdout)}
	var reached atomic.Bool
	res := bgjob.Each(ctx, f, func(ctx context.Context, _ string, c *bgjob.Client) (string, error) {
		reached.Store(true)
		return c.ListFunc(ctx, o.ListOptions, w.add)
	})
	// A host that failed before any job was listed (a container host
	// fails at its first script, not at Dial) prints the error's document
	// alone, not an empty list before it.
	if reached.Load() && (res[0].Err == nil || w.n > 0) {
		if err := w.close(res[0].Value); err != nil {
			return err
		}
	}
	return failures(a, res)
}

// streamTable prints one host's page as a table, its rows as they come:
// the table keeps their text, not the jobs (10,000 jobs are megabytes).
func (a *app) streamTable(ctx context.Context, f *bgjob.Fleet, o listOptions) error {
	t := newTable(a.stdout, o.AllWorkspaces, false)
	rows := 0
	// The table shows no count of a running job's processes.
	o.SkipRunningCount = true
	res := bgjob.Each(ctx, f, func(ctx context.Context, _ string, c *bgjob.Client) (string, error) {
		return c.ListFunc(ctx, o.ListOptions, func(j jobdir.Job) error {
			t.row(j)
			rows++
			return nil
		})
	})
	// A host that failed before any job prints no header.
	if rows > 0 || res[0].Err == nil {
		t.flush()
	}
	if res[0].Value != "" {
		fmt.Fprintf(a.stderr, "bgjob: more jobs: --cursor %s\n", res[0].Value)
	}
	return failures(a, res)
}

// listHosts prints the pages of several hosts, once all have answered:
// a JSON array of hosts, or one table with a column for the host.
func (a *app) listHosts(ctx context.Context, f *bgjob.Fleet, o listOptions) error {
	o.SkipRunningCount = !a.json
	res := f.List(ctx, o.ListOptions)
	if a.json {
		if err := hostsJSON(a, res, func(h *hostJSON, r bgjob.Result[bgjob.Page]) {
			if r.Value.Jobs != nil {
				h.Jobs, h.Next = &r.Value.Jobs, r.Value.Next
			}
		}); err != nil {
			return err
		}
		return failures(a, res)
	}
	t := newTable(a.stdout, o.AllWorkspaces, true)
	for _, r := range res {
		for _, j := range r.Value.Jobs {
			t.row(j)
		}
	}
	t.flush()
	for _, r := range res {
		if r.Value.Next != "" {
			fmt.Fprintf(a.stderr, "bgjob: %smore jobs: --cursor %s\n", hostLabel(a.hostName(r.Host)), r.Value.Next)
		}
	}
	return failures(a, res)
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
