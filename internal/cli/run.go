package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

type runOptions struct {
	spec       bgjob.Spec
	quiet      bool
	wait       time.Duration
	maxLogSize string
	maxBytes   int64
	keep       int
	ptySize    string
	plain      bool
	grace      time.Duration
	// ready, when not "", waits until a line of output matches it, for
	// up to readyTimeout (run --ready).
	ready        string
	readyTimeout time.Duration
	// labels and ulimits are run --label and --ulimit as given; memory
	// and cpus --memory and --cpus.
	labels, ulimits []string
	memory          string
	cpus            float64
	// readyPort, when not "", waits until the job listens on that TCP
	// port ("any": on any), as ready waits for a line (run --ready-port).
	readyPort string
	// port is run --port: "auto" or a number.
	port string
}

// exitRunning is run --wait's exit status when the job is still running at
// the end of the wait: EX_TEMPFAIL of sysexits.h, neither success nor
// timeout(1)'s 124, so "bgjob run --wait 30s -- make test && deploy" does
// not deploy while the tests run.
const exitRunning = 75

func (a *app) runCommand() *cobra.Command {
	var o runOptions
	long, example := help("run")
	cmd := &cobra.Command{
		Use:     "run [flags] -- CMD [ARGS...]",
		Short:   "Start a command as a detached background job",
		Long:    long,
		Example: example,
		Args:    needArgs(1, -1, "a command: bgjob run [flags] -- COMMAND [ARGS...]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if v := os.Getenv("BGJOB_KEEP"); v != "" && !cmd.Flags().Changed("keep") {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return usageError("BGJOB_KEEP=%q: want a number of jobs, 0 for no pruning on run", v)
				}
				o.keep = n
			}
			if o.keep < 0 {
				return usageError("--keep must not be negative")
			}
			if cmd.Flags().Changed("slots") && o.spec.Slots < 1 {
				return usageError("--slots must be at least 1")
			}
			if o.plain && o.wait == 0 {
				return usageError("--plain goes with --wait")
			}
			if err := readyFlags(cmd.Flags(), o); err != nil {
				return err
			}
			if o.ptySize != "" {
				cols, rows, err := bgjob.ParsePTYSize(o.ptySize)
				if err != nil {
					return usageError("--pty-size: %v", err)
				}
				o.spec.PTYCols, o.spec.PTYRows = cols, rows
			}
			o.spec.Argv = args
			if o.spec.Cwd == "" && len(a.hosts) == 0 {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("finding the working directory: %w", err)
				}
				o.spec.Cwd = wd
			}
			return a.runRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	// Flags after the command belong to it: "bgjob run ls -la" runs ls -la.
	f.SetInterspersed(false)
	f.StringVarP(&o.spec.Name, "name", "n", "", "name the job (address it by name later)")
	f.StringVarP(&o.spec.Cwd, "cwd", "C", "", "working directory (must exist; default: the current one, or home over SSH)")
	f.StringArrayVarP(&o.spec.Env, "env", "e", nil, "set an environment variable, NAME=VALUE (repeatable; not BGJOB_JOB_ID or BGJOB_JOB_DIR, which bgjob sets)")
	f.StringVar(&o.spec.Shell, "shell", "", "shell that runs a script command, found in the host's PATH, not in one --env sets (default: bash if present, else sh)")
	f.DurationVar(&o.spec.Timeout, "timeout", 0, "stop the job after this long (TERM, then KILL after --grace)")
	f.DurationVar(&o.grace, "grace", bgjob.DefaultGrace, "with --timeout or --replace, time between TERM and KILL")
	f.BoolVar(&o.spec.Replace, "replace", false, "with --name, first stop the jobs of that name and wait until their processes are gone")
	f.BoolVar(&o.spec.Stdin, "stdin", false, "give the job a FIFO as stdin, written with 'bgjob send' (default: /dev/null)")
	f.BoolVar(&o.spec.LineBuffered, "line-buffered", false, "ask programs to flush output by line (stdbuf -oL -eL, PYTHONUNBUFFERED=1)")
	f.DurationVar(&o.wait, "wait", 0, "wait up to this long and print the output: exit with the job's status if it ends, else 75 and leave it running")
	f.Int64Var(&o.maxBytes, "max-bytes", defaultMaxBytes, "with --wait, print at most N bytes of output (0: no cap)")
	f.BoolVar(&o.plain, "plain", false, "with --wait, print the output as text: terminal escape sequences stripped, \\r\\n as \\n (see logs --plain)")
	f.StringVar(&o.ready, "ready", "", "return once a line of output matches this POSIX extended regular expression (as wait --for): exit 0, the line on stderr; if the job ends first, its status (1 for 0) and its last lines; at --ready-timeout, 75 and the job left running")
	f.StringVar(&o.readyPort, "ready-port", "", "return once the job listens on this TCP port (or any, with \"any\"), as --ready returns: exit 0, the port on stderr")
	f.DurationVar(&o.readyTimeout, "ready-timeout", defaultReadyTimeout, "with --ready or --ready-port, give up after this long and exit 75, the job left running (0: no limit)")
	f.StringVar(&o.port, "port", "", "give the job a TCP port, \"auto\" (one free on the host, held by no other running job) or N (refused if taken, naming what holds it), in $PORT; recorded and shown")
	f.StringVar(&o.spec.PortEnv, "port-env", "", "with --port, pass the port in this environment variable instead of PORT")
	f.BoolVar(&o.spec.Merge, "merge", false, "write stderr into stdout.log as well: one ordered stream")
	f.IntVar(&o.spec.Slots, "slots", 0, "queue the job: it starts, in the order queued, once fewer than N slotted jobs of the workspace run on the host (1: one after another)")
	f.StringArrayVar(&o.spec.After, "after", nil, "start once job REF (id or name) has ended, whatever its status (repeatable)")
	f.StringArrayVar(&o.spec.AfterOK, "after-ok", nil, "start once job REF has exited 0; if it did not, end without running (status not_run) (repeatable)")
	f.BoolVar(&o.spec.PTY, "pty", false, "run the command on a pseudo-terminal (implies --stdin; needs util-linux script on the host)")
	f.StringVar(&o.ptySize, "pty-size", "", "with --pty, the terminal's size as COLSxROWS (default 80x24)")
	f.IntVar(&o.keep, "keep", bgjob.DefaultKeep, "run's pruning pass removes only ended jobs beyond the newest N, never one ended in the last 7 days (0: no count limit, so no pruning on run; env BGJOB_KEEP)")
	f.StringVar(&o.maxLogSize, "max-log-size", "", "keep only about this much of each log on disk, the newest (e.g. 100M; needs fallocate)")
	f.StringArrayVar(&o.labels, "label", nil, "label the job, "+labelHelp+"; ls, stop, wait, events and prune select by it")
	f.StringArrayVar(&o.ulimits, "ulimit", nil, "set a resource limit before the command starts, as docker run does: NAME=SOFT[:HARD], NAME one of "+strings.Join(jobdir.UlimitNames, ", ")+", values in bytes (cpu: seconds) or unlimited (repeatable)")
	f.StringVar(&o.memory, "memory", "", "bound the job's memory, as docker run does (e.g. 512m): refused, saying what the host has: bgjob makes no per-job cgroup yet")
	f.Float64Var(&o.cpus, "cpus", 0, "bound the job's CPUs, as docker run does (e.g. 1.5): refused, saying what the host has: bgjob makes no per-job cgroup yet")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only the job id")
	f.BoolVar(&a.json, "json", false, "print the job as JSON")
	return cmd
}

// runRun starts the job o describes on each host, and prints it (or, with
// --wait, its output and how it ended).
func (a *app) runRun(ctx context.Context, o runOptions) error {
	if err := a.completeSpec(&o); err != nil {
		return err
	}
	// What each host found of other jobs with the name; with one host,
	// under "".
	var mu sync.Mutex
	held := map[string]*nameHeld{}
	o.spec.NameHeld = func(old jobdir.Job, replaced bool) {
		mu.Lock()
		defer mu.Unlock()
		h := a.hostName(old.Host)
		if held[h] == nil {
			held[h] = new(nameHeld)
		}
		held[h].add(a, h, o.spec.Name, old, replaced)
	}
	// Run's pruning pass keeps the newest --keep ended jobs and those
	// that ended within bgjob.DefaultMaxAge (--keep 0: no pass).
	prune := bgjob.WithAutoPrune(0, 0)
	if o.keep > 0 {
		prune = bgjob.WithAutoPrune(o.keep, bgjob.DefaultMaxAge)
	}
	// The launch has a deadline; run --wait's wait, its own.
	f := a.fleetVia(a.limit(o.spec.ReplaceTime()), a.connectWith(prune))
	if o.spec.ID == "" {
		// One id on every host.
		o.spec.ID = jobdir.NewID(time.Now())
	}
	var (
		waited error
		rd     *readied
	)
	res := bgjob.Each(ctx, f, func(startCtx context.Context, _ string, c *bgjob.Client) (jobdir.Job, error) {
		j, err := c.Run(startCtx, o.spec)
		switch {
		case err == nil && o.wait > 0:
			waited = a.promote(ctx, c, j, o)
		case err == nil && (o.ready != "" || o.readyPort != ""):
			r := a.ready(ctx, c, j, o)
			rd, j = &r, r.Job
		case err != nil && ctx.Err() != nil:
			a.sayGoesOn(ctx, c, o.spec.ID, o.quiet)
		}
		return j, err
	})
	if o.wait > 0 && res[0].Err == nil {
		return waited
	}
	if err := a.printRuns(res, held, rd, o); err != nil || rd == nil {
		return err
	}
	if rd.err != nil && ctx.Err() != nil {
		// Interrupted: the job goes on, and its id was printed.
		fmt.Fprintf(a.stderr, "bgjob: job %s goes on in the background (bgjob stop %s stops it)\n", rd.Job.ID, rd.Job.ID)
	}
	return a.readyExit(*rd, o)
}

// completeSpec checks run's flags, and puts in o.spec those that are not
// its own fields: the grace and the size of the logs kept.
func (a *app) completeSpec(o *runOptions) error {
	if o.wait < 0 || o.maxBytes < 0 {
		return usageError("--wait and --max-bytes must not be negative")
	}
	g, err := graceFlag(o.grace)
	if err != nil {
		return err
	}
	o.spec.Grace = &g
	switch o.port {
	case "":
	case "auto":
		o.spec.AutoPort = true
	default:
		n, err := strconv.Atoi(o.port)
		if err != nil || n < 1 || n > 65535 {
			return usageError("--port %q: want auto or a TCP port from 1 to 65535", o.port)
		}
		o.spec.Port = n
	}
	if o.spec.PortEnv != "" && o.port == "" {
		return usageError("--port-env goes with --port")
	}
	if o.maxLogSize != "" {
		n, err := parseSize(o.maxLogSize)
		if err != nil {
			return usageError("--max-log-size: %v", err)
		}
		o.spec.MaxLogSize = n
	}
	if o.spec.Labels, err = parseLabels(o.labels); err != nil {
		return err
	}
	if o.spec.Ulimits, err = parseUlimits(o.ulimits); err != nil {
		return err
	}
	if o.memory != "" {
		if o.spec.Memory, err = parseSize(o.memory); err != nil {
			return usageError("--memory: %v", err)
		}
	}
	if o.cpus < 0 {
		return usageError("--cpus must not be negative")
	}
	o.spec.CPUs = o.cpus
	if err := o.spec.Validate(); err != nil {
		return fieldError(err, runFlags)
	}
	if o.wait > 0 && a.many() {
		return usageError("--wait works on one host; with several, run then use 'bgjob wait' and 'bgjob logs'")
	}
	if o.ready != "" && a.many() {
		return usageError("--ready works on one host; with several, run then use 'bgjob wait --for' on each")
	}
	if o.readyPort != "" && a.many() {
		return usageError("--ready-port works on one host; with several, run then use 'bgjob wait --port' on each")
	}
	return nil
}

// sayGoesOn says whether job id runs, after run was interrupted while it
// launched: the job may run all the same (its wrapper, once started, goes
// on by itself). A look, past the interrupt and short, says so rather
// than leave it unseen.
func (a *app) sayGoesOn(ctx context.Context, c *bgjob.Client, id string, quiet bool) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptedLook)
	jobs, err := c.Status(lctx, id)
	cancel()
	if err == nil && len(jobs) == 1 && jobs[0].Status.Active() {
		fmt.Fprintf(a.stderr, "bgjob: job %s goes on in the background (bgjob stop %s stops it)\n", id, id)
		if quiet && !a.many() {
			// id=$(bgjob run -q ...) has the job it started all the
			// same.
			fmt.Fprintln(a.stdout, id)
		}
	}
}

// printRuns prints the jobs run started: with one host its id, pid and
// logs, with several a table with a HOST column (--quiet: the id once;
// --json: the job, or an object per host, with rd, what --ready found,
// when not nil).
func (a *app) printRuns(res []bgjob.Result[jobdir.Job], held map[string]*nameHeld, rd *readied, o runOptions) error {
	if !a.many() {
		j := res[0].Value
		switch {
		case res[0].Err != nil:
		case a.json:
			var h nameHeld
			if p := held[""]; p != nil {
				h = *p
			}
			rj := runJSON{Job: j, nameHeld: h}
			if rd != nil {
				rj.readyJSON = rd.json()
			}
			if err := printJSON(a.stdout, rj); err != nil {
				return err
			}
		case o.quiet:
			fmt.Fprintln(a.stdout, j.ID)
		default:
			fmt.Fprintf(a.stdout, "id:     %s\npid:    %d\n", j.ID, j.PID)
			if j.Port != 0 {
				fmt.Fprintf(a.stdout, "port:   %d\n", j.Port)
			}
			if j.Status != jobdir.StatusRunning {
				// Queued, or (its turn came with a reason not to run)
				// ended already.
				fmt.Fprintf(a.stdout, "status: %s\n", statusText(j))
			}
			fmt.Fprintf(a.stdout, "stdout: %s\nstderr: %s\n", j.StdoutPath, j.StderrPath)
		}
		return failures(a, res)
	}
	switch {
	case a.json:
		if err := hostsJSON(a, res, func(h *hostJSON, r bgjob.Result[jobdir.Job]) {
			if n := held[r.Host]; n != nil {
				h.Replaced, h.Running = n.Replaced, n.Running
			}
			if r.Err == nil {
				h.Job = &r.Value
			}
		}); err != nil {
			return err
		}
	case o.quiet:
		for _, r := range res {
			if r.Err == nil {
				fmt.Fprintln(a.stdout, r.Value.ID)
				break
			}
		}
	default:
		tw := newColumns(a.stdout, 2)
		fmt.Fprintln(tw, "HOST\tID\tPID\tSTDOUT\tSTDERR")
		for _, r := range res {
			if j := r.Value; r.Err == nil {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.Host, j.ID, j.PID, j.StdoutPath, j.StderrPath)
			}
		}
		tw.Flush()
	}
	return failures(a, res)
}

// runFlags are the flags of the Spec fields a bgjob.FieldError names.
var runFlags = map[string]string{"Slots": "--slots", "Replace": "--replace", "Name": "--name", "Timeout": "--timeout", "PTYCols": "--pty-size", "PTY": "--pty"}

// fieldError is the usage error of options that Validate refused, worded
// with the verb's flags (--replace needs --name).
func fieldError(err error, flags map[string]string) error {
	var fe *bgjob.FieldError
	if errors.As(err, &fe) {
		return usageError("%s", fe.Text(func(f string) string { return flags[f] }))
	}
	return err
}

// nameHeld is what run found of other jobs with its name: the ids it
// replaced, and those still running beside it.
type nameHeld struct {
	Replaced []string `json:"replaced,omitempty"`
	Running  []string `json:"same_name_running,omitempty"`
}

// add notes the job old that had name, and warns on stderr when it runs
// on beside the new job.
func (h *nameHeld) add(a *app, host, name string, old jobdir.Job, replaced bool) {
	if replaced {
		h.Replaced = append(h.Replaced, old.ID)
		return
	}
	h.Running = append(h.Running, old.ID)
	if host != "" {
		host += ": "
	}
	fmt.Fprintf(a.stderr, "bgjob: warning: %sjob %s named %s is still running; the name now means the new job (--replace stops the old one first)\n", host, visible(old.ID), visible(name))
}

// runJSON is run's --json: the job, the jobs of its name it replaced or
// left running, and with --ready what became of the wait.
type runJSON struct {
	jobdir.Job
	nameHeld
	*readyJSON
}

// promote waits up to o.wait for job j and prints its output (at most
// o.maxBytes). A job that ended gives its exit status as the error; one
// still running gives exitRunning.
func (a *app) promote(ctx context.Context, c *bgjob.Client, j jobdir.Job, o runOptions) error {
	jobs, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: o.wait})
	running := errors.Is(err, bgjob.ErrTimeout)
	if err != nil && !running {
		if ctx.Err() != nil {
			// Interrupted: the job goes on, and the caller must learn its id.
			fmt.Fprintf(a.stderr, "bgjob: job %s goes on in the background (bgjob stop %s stops it)\n", j.ID, j.ID)
		}
		return a.alone(err)
	}
	lo := bgjob.LogOptions{All: true, MaxBytes: o.maxBytes}
	lctx, end := bgjob.Within(ctx, a.host, a.limit(0))
	if a.json {
		var out, errb bytes.Buffer
		res, err := c.Logs(lctx, j.ID, lo, &out, &errb)
		if err = end(err); err != nil {
			return a.alone(err)
		}
		if err := printJSON(a.stdout, logsJSON(res, text(out.Bytes(), o.plain), text(errb.Bytes(), o.plain))); err != nil {
			return err
		}
	} else {
		var outw, errw io.Writer = a.stdout, a.stderr
		if o.plain {
			pout, perr := termtext.NewWriter(outw), termtext.NewWriter(errw)
			defer pout.Close()
			defer perr.Close()
			outw, errw = pout, perr
		}
		res, err := c.Logs(lctx, j.ID, lo, outw, errw)
		if err = end(err); err != nil {
			return a.alone(err)
		}
		a.cutHints(res)
	}
	if running {
		state := "running"
		if j.Status == jobdir.StatusQueued {
			state = "queued"
		}
		fmt.Fprintf(a.stderr, "bgjob: job %s is still %s after %s; it goes on in the background\n", j.ID, state, o.wait)
		return &exitError{code: exitRunning}
	}
	// The id in every case: the output may be cut, and the job read on.
	for _, e := range jobs {
		if e.Status != jobdir.StatusLost && e.ExitCode != nil {
			how := fmt.Sprintf("%s with status %d", e.Status, *e.ExitCode)
			if e.Reason != "" {
				how += " (" + e.Reason + ")"
			}
			fmt.Fprintf(a.stderr, "bgjob: job %s %s\n", e.ID, how)
		}
	}
	return jobsExit(a, []bgjob.Result[[]jobdir.Job]{{Value: jobs}})
}

// parseSize reads a byte count: a number with an optional K, M or G
// (powers of 1024), at least 8K.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := strings.TrimSuffix(strings.ToUpper(s), "B")
	switch {
	case strings.HasSuffix(num, "K"):
		mult, num = 1<<10, strings.TrimSuffix(num, "K")
	case strings.HasSuffix(num, "M"):
		mult, num = 1<<20, strings.TrimSuffix(num, "M")
	case strings.HasSuffix(num, "G"):
		mult, num = 1<<30, strings.TrimSuffix(num, "G")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (want e.g. 65536, 64K, 100M or 2G)", s)
	}
	if n*mult < 8<<10 {
		return 0, fmt.Errorf("%q is below the smallest cap, 8K", s)
	}
	return n * mult, nil
}
