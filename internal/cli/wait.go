package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

// exitTimeout is wait's exit status when its timeout expires, as timeout(1).
const exitTimeout = 124

type waitOptions struct {
	bgjob.WaitOptions
	refs    []string
	labels  []string
	pattern string
	forSet  bool
	port    string
	stdout  bool
	stderr  bool
	all     bool
}

func (a *app) waitCommand() *cobra.Command {
	var o waitOptions
	long, example := help("wait")
	cmd := &cobra.Command{
		Use:     "wait ID...",
		Short:   "Wait for jobs to end, or for a line of output, and exit with their status",
		Long:    long,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Labels, err = parseLabels(o.labels); err != nil {
				return err
			}
			switch {
			case len(args) == 0 && len(o.Labels) == 0:
				return usageError("wait needs a job id or name, or --label")
			case len(args) > 0 && len(o.Labels) > 0:
				return usageError("give job ids or names, or --label: not both")
			}
			if o.Timeout < 0 {
				return usageError("--timeout must not be negative")
			}
			o.refs, o.forSet = args, cmd.Flags().Changed("for")
			if cmd.Flags().Changed("port") {
				return a.portWait(cmd.Context(), o)
			}
			if countTrue(o.stdout, o.stderr, o.all) > 1 {
				return usageError("use one of --stdout, --stderr and --all")
			}
			if !o.forSet {
				if o.stdout || o.stderr || o.all {
					return usageError("--stdout, --stderr and --all go with --for")
				}
				return a.runWait(cmd.Context(), o)
			}
			if len(args) != 1 || o.Any || len(o.Labels) > 0 {
				return usageError("--for waits for one job")
			}
			if a.many() {
				return usageError("--for waits on one host")
			}
			return a.runWaitFor(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Timeout, "timeout", 0, "give up after this long and exit 124 (0: no limit)")
	f.BoolVar(&o.Any, "any", false, "return when the first job ends")
	f.StringArrayVar(&o.labels, "label", nil, "wait for the jobs of the workspace that have this label and still run (none running: report those that ended), "+labelHelp+"; all given must match")
	f.StringVar(&o.pattern, "for", "", "wait for a line of output matching this POSIX extended regular expression")
	f.BoolVar(&o.stdout, "stdout", false, "with --for, match stdout.log only")
	f.BoolVar(&o.stderr, "stderr", false, "with --for, match stderr.log only")
	f.BoolVar(&o.all, "all", false, "with --for, match both logs (the default)")
	f.StringVar(&o.port, "port", "", "wait until the job listens on this TCP port, or on any with \"any\"")
	f.BoolVar(&a.json, "json", false, "print the jobs as a JSON array (with --for: {id, status, exit_code, logs: [the line]}; with --port: the job)")
	return cmd
}

// runWait waits for the jobs o names to end, each host's, and exits with
// their status.
func (a *app) runWait(ctx context.Context, o waitOptions) error {
	res := a.waitFleet().Wait(ctx, o.refs, o.WaitOptions)
	if a.json {
		if err := jobsJSON(a, res); err != nil {
			return err
		}
	}
	if r := res[0]; !a.many() && r.Err == nil {
		a.endLines(r.Value)
	}
	return jobsExit(a, res)
}

// waitFleet is the fleet of a wait: --host-timeout bounds each host's
// first answer, --timeout the whole wait, connecting included (see
// bgjob.Fleet.Wait).
func (a *app) waitFleet() *bgjob.Fleet { return a.fleet(a.limit(0)) }

// runWaitFor waits for a line of the job o names that matches o.pattern,
// and prints it.
func (a *app) runWaitFor(ctx context.Context, o waitOptions) error {
	ref := o.refs[0]
	r := a.waitFleet().WaitFor(ctx, ref, o.pattern, bgjob.WaitForOptions{Stdout: o.stdout, Stderr: o.stderr, Timeout: o.Timeout, Rewound: a.rewound(ref)})[0]
	j, m, err := r.Value.Job, r.Value.Match, a.alone(r.Err)
	if errors.Is(err, bgjob.ErrTimeout) || errors.Is(err, bgjob.ErrNoMatch) {
		a.droppedHint(j, o)
	}
	if err != nil {
		return waitFailed(j, err)
	}
	if a.json {
		res := bgjob.LogResult{Job: j, Ranges: []bgjob.LogRange{m.LogRange}}
		if m.Stream == "stderr" {
			return printJSON(a.stdout, logsJSON(res, nil, m.Line))
		}
		return printJSON(a.stdout, logsJSON(res, m.Line, nil))
	}
	if m.Truncated {
		fmt.Fprintf(a.stderr, "bgjob: hint: the matching line is longer than 64 KiB: printed %s bytes %d to %d; 'bgjob logs --offset N' reads any range\n", m.Stream, m.Offset, m.Next)
	}
	_, err = a.stdout.Write(endLine(m.Line))
	return err
}

// noMatchCode is the exit status of a wait for a line (wait --for, run
// --ready) that saw job j end without one: the job's status, 1 for 0 or
// none.
func noMatchCode(j jobdir.Job) int {
	if j.ExitCode != nil && *j.ExitCode != 0 {
		return *j.ExitCode
	}
	return 1
}

// endLine is b ended by a newline when it has bytes and none of its own
// (a line cut at 64 KiB, a prompt being written), so that what follows
// starts a line.
func endLine(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(b[:len(b):len(b)], '\n')
	}
	return b
}

// droppedHint says on stderr, after a wait --for that found no line, that
// the job's --max-log-size cap dropped bytes of the logs it read, among
// which a line may have matched unseen.
func (a *app) droppedHint(j jobdir.Job, o waitOptions) {
	for _, d := range []struct {
		stream string
		n      int64
		read   bool
	}{{"stdout", j.StdoutDropped, !o.stderr}, {"stderr", j.StderrDropped, !o.stdout}} {
		if d.read && d.n > 0 {
			fmt.Fprintf(a.stderr, "bgjob: hint: the job's --max-log-size dropped the first %d bytes of %s: a line among them was not matched\n", d.n, d.stream)
		}
	}
}

// endLines says on stderr how each job ended, when stdout is a terminal
// (a person is watching; a program reads the exit status).
func (a *app) endLines(jobs []jobdir.Job) {
	if !a.terminal(a.stdout) {
		return
	}
	for _, j := range jobs {
		fmt.Fprintf(a.stderr, "bgjob: job %s %s\n", j.ID, jobtext.End(j))
	}
}

// jobsExit is the exit status of the verbs that end with jobs (wait, logs
// --follow, run --wait), each job that did not exit 0 said on stderr.
// With one host it is the first non-zero exit code of its jobs, 1 for a
// lost job (if none came before), or the host's error (124 for a
// timeout). With several it is the largest exit code of all jobs, 1 for
// a lost job or a failed host, 124 for a host whose wait timed out, and
// each line names its host.
func jobsExit(a *app, res []bgjob.Result[[]jobdir.Job]) error {
	if r := res[0]; !a.many() && r.Err != nil {
		err := a.alone(r.Err)
		if errors.Is(err, bgjob.ErrTimeout) {
			return &exitError{code: exitTimeout, err: err}
		}
		return err
	}
	code := 0
	add := func(c int) {
		if a.many() {
			code = max(code, c)
		} else if code == 0 {
			code = c
		}
	}
	for _, r := range res {
		if r.Err != nil {
			fmt.Fprintf(a.stderr, "bgjob: error: %s: %s\n", r.Host, hostReason(r.Host, r.Err))
			if errors.Is(r.Err, bgjob.ErrTimeout) {
				add(exitTimeout)
			} else {
				add(1)
			}
			continue
		}
		// "bgjob: error: HOST: " with several hosts, "bgjob: " with one.
		prefix := "bgjob: "
		if a.many() {
			prefix = "bgjob: error: " + r.Host + ": "
		}
		for _, j := range r.Value {
			switch {
			case j.Status == jobdir.StatusLost:
				fmt.Fprintf(a.stderr, "%sjob %s was lost: it ended without recording an exit status\n", prefix, j.ID)
				add(1)
			case j.Status == jobdir.StatusNotRun:
				fmt.Fprintf(a.stderr, "%sjob %s was not run: %s\n", prefix, j.ID, j.Error)
				add(1)
			case j.Status == jobdir.StatusUnreadable:
				// Its files do not say how it ended, nor whether it has.
				fmt.Fprintf(a.stderr, "%sjob %s is unreadable: %s\n", prefix, j.ID, j.Error)
				add(1)
			case j.ExitCode != nil && *j.ExitCode != 0:
				if a.many() {
					fmt.Fprintf(a.stderr, "%sjob %s %s with status %d\n", prefix, j.ID, j.Status, *j.ExitCode)
				}
				add(*j.ExitCode)
			}
		}
	}
	return exitCode(code)
}

// portWait checks wait --port's flags and runs runWaitPort.
func (a *app) portWait(ctx context.Context, o waitOptions) error {
	switch {
	case o.forSet:
		return usageError("use one of --for and --port")
	case o.stdout || o.stderr || o.all:
		return usageError("--stdout, --stderr and --all go with --for")
	case len(o.refs) != 1 || o.Any:
		return usageError("--port waits for one job")
	case a.many():
		return usageError("--port waits on one host")
	}
	port, err := parsePort(o.port, "--port")
	if err != nil {
		return err
	}
	return a.runWaitPort(ctx, o.refs[0], port, o.Timeout)
}

// parsePort reads the port a flag named: a number from 1 to 65535, or
// "any" (bgjob.AnyPort).
func parsePort(s, flag string) (int, error) {
	if s == "any" {
		return bgjob.AnyPort, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, usageError("%s %q: want a TCP port from 1 to 65535, or any", flag, s)
	}
	return n, nil
}

// runWaitPort waits until the job ref names listens on TCP port (any:
// bgjob.AnyPort), and prints the port found as status shows it: the
// three outcomes of wait --for (found: 0; the job ended first: its
// status, or 1; the timeout: 124).
func (a *app) runWaitPort(ctx context.Context, ref string, port int, timeout time.Duration) error {
	r := a.waitFleet().WaitPort(ctx, ref, port, bgjob.WaitPortOptions{Timeout: timeout})[0]
	j, p, err := r.Value.Job, r.Value.Port, a.alone(r.Err)
	if err != nil {
		return waitFailed(j, err)
	}
	if a.json {
		return printJSON(a.stdout, []jobdir.Job{j})
	}
	_, err = fmt.Fprintln(a.stdout, p.String())
	return err
}

// waitFailed is the error of a wait for a line or a port (--for, --port)
// that ended with err, with the exit status of its outcome: the timeout
// 124; the job ended first its status (1 for 0), said with how it ended.
func waitFailed(j jobdir.Job, err error) error {
	switch {
	case errors.Is(err, bgjob.ErrTimeout):
		return &exitError{code: exitTimeout, err: err}
	case errors.Is(err, bgjob.ErrNoMatch):
		return &exitError{code: noMatchCode(j), err: fmt.Errorf("%w (%s)", err, jobtext.End(j))}
	}
	return err
}
