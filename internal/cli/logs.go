package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type logsOptions struct {
	bgjob.LogOptions
	offset int64
}

func (a *app) logsCommand() *cobra.Command {
	var o logsOptions
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's output",
		Long: `Print a job's stdout (or --stderr, or --all for both: stdout to stdout,
stderr to stderr) exactly as written, binary-safe.

--tail, --head and --bytes read from the end or the start of the file without
loading it. --offset K prints the bytes from byte K; with --json the result
carries next_offset, so a caller can poll "what is new" without state.
--new keeps a read cursor in the job directory (one per --reader), so
successive calls, from any process or machine, each print only unread output.
--offset and --new never end in the middle of a UTF-8 character while the job
runs. --follow keeps printing until the job ends, then exits with its status.

With several hosts each line starts with "HOST: " (--no-prefix drops it);
lines of different hosts never mix, and a last line without a newline gets
one. --follow holds one connection per host: with more hosts than
--parallel, the later hosts are followed as the earlier ones end.`,
		Example: `  bgjob logs --tail 50 server
  bgjob logs --all --follow build
  bgjob logs --new --json tests          # only what arrived since the last --new
  bgjob logs --offset 1024 --json tests  # the bytes from 1024, and next_offset`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			picks := 0
			for _, name := range []string{"tail", "head", "bytes", "offset", "new"} {
				if cmd.Flags().Changed(name) {
					picks++
				}
			}
			if picks > 1 {
				return usageError("use at most one of --tail, --head, --bytes, --offset and --new")
			}
			if o.Tail < 0 || o.Head < 0 || o.Bytes < 0 || o.offset < 0 {
				return usageError("--tail, --head, --bytes and --offset must not be negative")
			}
			if cmd.Flags().Changed("reader") && !o.New {
				return usageError("--reader goes with --new")
			}
			if o.New && o.Follow {
				return usageError("--new reads what is there now; it does not go with --follow")
			}
			if o.Stderr && o.All {
				return usageError("use --stderr or --all, not both")
			}
			o.Offset, o.FromOffset = o.offset, cmd.Flags().Changed("offset")
			return a.logs(cmd.Context(), args[0], o.LogOptions)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Stderr, "stderr", false, "print stderr.log instead of stdout.log")
	f.BoolVar(&o.All, "all", false, "print both logs")
	f.IntVar(&o.Tail, "tail", 0, "print only the last N lines")
	f.IntVar(&o.Head, "head", 0, "print only the first N lines")
	f.Int64Var(&o.Bytes, "bytes", 0, "print only the last N bytes")
	f.Int64Var(&o.offset, "offset", 0, "print the bytes from this byte offset")
	f.BoolVar(&o.New, "new", false, "print only what this reader has not read yet, and remember")
	f.StringVar(&o.Reader, "reader", "", "name of the reader whose cursor --new moves (default \"default\")")
	f.BoolVarP(&o.Follow, "follow", "f", false, "keep printing until the job ends, then exit with its status")
	f.BoolVar(&a.noPrefix, "no-prefix", false, "with several hosts, do not start each line with \"HOST: \"")
	f.BoolVar(&a.json, "json", false, "print {job, logs: [{stream, offset, next_offset, data}]}")
	return cmd
}

// logChunk is one log's part of the --json output. Data holds text; bytes
// that are not valid UTF-8 are given as data_base64 instead.
type logChunk struct {
	bgjob.LogRange
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"data_base64,omitempty"`
}

func (a *app) logs(ctx context.Context, ref string, o bgjob.LogOptions) error {
	if a.many() {
		return a.fleetLogs(ctx, ref, o)
	}
	c, release, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer release()
	if !a.json {
		// --stderr alone prints the log on stdout, ready for a pipe.
		errw := a.stderr
		if !o.All {
			errw = a.stdout
		}
		res, err := c.Logs(ctx, ref, o, a.stdout, errw)
		if err != nil {
			return err
		}
		if o.Follow {
			return jobExit(a, []jobdir.Job{res.Job})
		}
		return nil
	}
	var out, errb bytes.Buffer
	res, err := c.Logs(ctx, ref, o, &out, &errb)
	if err != nil {
		return err
	}
	return printJSON(a.stdout, logsJSON(res, out.Bytes(), errb.Bytes()))
}

// jobLogs is the --json shape of logs and run --wait: the job and the
// logs read.
type jobLogs struct {
	Job  jobdir.Job `json:"job"`
	Logs []logChunk `json:"logs"`
}

func logsJSON(res bgjob.LogResult, stdout, stderr []byte) jobLogs {
	chunks := []logChunk{}
	for _, r := range res.Ranges {
		data := stdout
		if r.Stream == "stderr" {
			data = stderr
		}
		ch := logChunk{LogRange: r}
		if s := string(data); utf8.ValidString(s) {
			ch.Data = &s
		} else {
			b := base64.StdEncoding.EncodeToString(data)
			ch.DataBase64 = &b
		}
		chunks = append(chunks, ch)
	}
	return jobLogs{Job: res.Job, Logs: chunks}
}
