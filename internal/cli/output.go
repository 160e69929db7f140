package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// printJSON is the one JSON printer: indented, snake_case keys from the
// jobdir structs, a trailing newline.
func printJSON(w io.Writer, v any) error {
	return encodeJSON(w, v, "")
}

// encodeJSON writes v as printJSON does, each line after the first
// prefixed with prefix (to nest it in a streamed array).
func encodeJSON(w io.Writer, v any, prefix string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func exitText(j jobdir.Job) string {
	if j.ExitCode == nil {
		return "-"
	}
	return strconv.Itoa(*j.ExitCode)
}

func statusText(j jobdir.Job) string {
	s := string(j.Status)
	if j.Reason != "" {
		s += " (" + j.Reason + ")"
	}
	return s
}

// printJob prints one job as "key: value" lines.
func printJob(w io.Writer, j jobdir.Job) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("id", j.ID)
	row("name", j.Name)
	row("host", j.Host)
	row("workspace", j.Workspace)
	row("status", statusText(j))
	if j.ExitCode != nil {
		row("exit_code", exitText(j))
	}
	if j.PID != 0 {
		row("pid", strconv.Itoa(j.PID))
	}
	row("command", j.Command)
	row("cwd", j.Cwd)
	if !j.StartedAt.IsZero() {
		row("started_at", j.StartedAt.Local().Format(time.RFC3339))
	}
	if j.EndedAt != nil {
		row("ended_at", j.EndedAt.Local().Format(time.RFC3339))
	}
	row("timeout", j.Timeout)
	if j.MaxLogSize > 0 {
		row("max_log_size", strconv.FormatInt(j.MaxLogSize, 10))
		row("dropped", fmt.Sprintf("stdout %d bytes, stderr %d bytes", j.StdoutDropped, j.StderrDropped))
	}
	row("buffering", j.Buffering)
	row("error", j.Error)
	row("stdout", j.StdoutPath)
	row("stderr", j.StderrPath)
	tw.Flush()
}

// table prints jobs one per line, in aligned columns.
type table struct {
	tw            *tabwriter.Writer
	withWorkspace bool
}

func newTable(w io.Writer, withWorkspace bool) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), withWorkspace: withWorkspace}
	if withWorkspace {
		fmt.Fprintln(t.tw, "ID\tWORKSPACE\tSTATUS\tEXIT\tSTARTED\tNAME\tCOMMAND")
	} else {
		fmt.Fprintln(t.tw, "ID\tSTATUS\tEXIT\tSTARTED\tNAME\tCOMMAND")
	}
	return t
}

func (t *table) row(j jobdir.Job) {
	started := "-"
	if !j.StartedAt.IsZero() {
		started = j.StartedAt.Local().Format("01-02 15:04:05")
	}
	cmd := strings.Join(strings.Fields(j.Command), " ")
	if len(cmd) > 60 {
		cmd = cmd[:57] + "..."
	}
	name := j.Name
	if name == "" {
		name = "-"
	}
	if t.withWorkspace {
		fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Workspace, statusText(j), exitText(j), started, name, cmd)
	} else {
		fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, statusText(j), exitText(j), started, name, cmd)
	}
}

func (t *table) flush() { t.tw.Flush() }
