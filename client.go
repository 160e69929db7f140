package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Sentinel errors callers can test with errors.Is.
var (
	// ErrNotFound: no job has that id or name.
	ErrNotFound = errors.New("not found")
	// ErrBusy: the job still has live processes.
	ErrBusy = errors.New("job is still running")
	// ErrTimeout: Wait gave up.
	ErrTimeout = errors.New("timed out")
	// ErrUsage: the request itself is invalid (bad name, flag or value).
	ErrUsage = errors.New("invalid request")
)

// DefaultGrace is how long Stop waits after the first signal before SIGKILL.
const DefaultGrace = 2 * time.Second

// Run's opportunistic pruning: after each launch the host removes, in the
// background, up to autoPruneMax ended jobs of the workspace beyond the
// newest DefaultKeep or started more than DefaultMaxAge ago.
const (
	DefaultKeep   = 1000
	DefaultMaxAge = 7 * 24 * time.Hour
	autoPruneMax  = 20
)

// Client runs and inspects jobs in one workspace of one host.
type Client struct {
	rt        Runtime
	root      string
	workspace string
	pruneKeep int
	pruneAge  time.Duration
}

// NewClient returns a client for workspace (jobdir.DefaultWorkspace when
// "") under root ("" for the host's default, /tmp/bgjob-$UID) on rt.
func NewClient(rt Runtime, root, workspace string) (*Client, error) {
	if workspace == "" {
		workspace = jobdir.DefaultWorkspace
	}
	if err := jobdir.ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if root != "" && !strings.HasPrefix(root, "/") {
		return nil, fmt.Errorf("%w: root %q must be an absolute path", ErrUsage, root)
	}
	if d, ok := rt.(interface{ DefaultRoot() string }); ok && root == "" {
		// The runtime knows the host's default: no need for the script
		// to ask the host.
		root = d.DefaultRoot()
	}
	return &Client{rt: rt, root: root, workspace: workspace, pruneKeep: DefaultKeep, pruneAge: DefaultMaxAge}, nil
}

// SetAutoPrune changes what Run's opportunistic pruning keeps: the newest
// keep ended jobs and those younger than maxAge (0 for either: no such
// limit; both 0: no pruning on Run).
func (c *Client) SetAutoPrune(keep int, maxAge time.Duration) {
	c.pruneKeep, c.pruneAge = keep, maxAge
}

// autoPrune returns the bounds of Run's pruning pass for a job started now.
func (c *Client) autoPrune(now time.Time) shellgen.AutoPrune {
	p := shellgen.AutoPrune{Keep: c.pruneKeep, Max: autoPruneMax}
	if c.pruneAge > 0 {
		p.Before = now.Add(-c.pruneAge).UTC().Format("20060102T150405")
	}
	return p
}

func (c *Client) target() shellgen.Target {
	return shellgen.Target{Root: c.root, Workspace: c.workspace}
}

// exec runs script and hands each event it reports to fn. With watch set,
// the script's stdin stays open until exec returns or ctx ends, so that
// scripts that wait notice when their caller goes away.
func (c *Client) exec(ctx context.Context, script string, watch bool, fn func(shellgen.Event) error) error {
	if !watch {
		return c.execStdin(ctx, script, nil, fn)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return c.execStdin(ctx, script, ctxReader{ctx}, fn)
}

// execStdin is exec with the script's stdin given.
func (c *Client) execStdin(ctx context.Context, script string, stdin io.Reader, fn func(shellgen.Event) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := c.rt.Exec(ctx, script, stdin, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	early := false
	derr := shellgen.Decode(pr, func(ev shellgen.Event) error {
		err := fn(ev)
		early = errors.Is(err, shellgen.ErrStop)
		return err
	})
	stopped := derr == nil
	if derr != nil || early {
		// The rest of the script's work is unwanted: end it. A script
		// that reached its end marker is left to exit by itself, so
		// what it started in the background (run's pruning) lives on.
		cancel()
	}
	pr.Close()
	xerr := <-errc
	switch {
	case derr != nil && xerr != nil && !errors.Is(xerr, context.Canceled):
		return xerr
	case derr != nil:
		if errors.Is(derr, shellgen.ErrTruncated) && ctx.Err() != nil {
			return ctx.Err()
		}
		return derr
	case xerr != nil && !stopped:
		return xerr
	}
	return nil
}

// ctxReader blocks until its context ends, then reports EOF.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}

func (c *Client) derive(o *jobdir.Observation) jobdir.Job {
	return jobdir.Derive(*o, c.rt.Host())
}

// refError turns a script's refusal into an error wrapping a sentinel.
func refError(e *shellgen.RefError) error {
	switch e.Kind {
	case "notfound":
		return fmt.Errorf("job %s: %w", e.Subject, ErrNotFound)
	case "busy":
		return fmt.Errorf("job %s: %w (stop it first, or use --force)", e.Subject, ErrBusy)
	case "cwd":
		return fmt.Errorf("%w: %s", ErrUsage, e.Subject)
	case "notempty":
		return fmt.Errorf("job directory %s holds files bgjob did not write: removed bgjob's files, kept the rest", e.Subject)
	case "outside":
		return fmt.Errorf("%s is not a job directory under the root", e.Subject)
	}
	return errors.New(e.Subject)
}

// Spec describes a job to run.
type Spec struct {
	// Name names the job; a later job with the same name shadows it.
	Name string
	// Argv is the command: one word is a shell script run with Shell
	// ("sh -c" semantics); several are an argv, run exactly.
	Argv []string
	// Shell runs a script command; "" means bash where the host has it,
	// else sh.
	Shell string
	// Cwd is the working directory; "" means where the launcher runs.
	Cwd string
	// Env holds NAME=VALUE pairs to set.
	Env []string
	// Timeout stops the job after this long (0: never); the host enforces
	// it, TERM then KILL after Grace (DefaultGrace when 0).
	Timeout time.Duration
	Grace   time.Duration
	// Stdin gives the job a FIFO as its standard input, written with Send;
	// otherwise it reads /dev/null.
	Stdin bool
	// LineBuffered asks programs to write their output line by line
	// ("stdbuf -oL -eL" where the host has it, PYTHONUNBUFFERED=1).
	LineBuffered bool
}

// Run starts a job and returns as soon as it is running.
func (c *Client) Run(ctx context.Context, s Spec) (jobdir.Job, error) {
	if len(s.Argv) == 0 {
		return jobdir.Job{}, fmt.Errorf("%w: no command given", ErrUsage)
	}
	if s.Name != "" {
		if err := jobdir.ValidateName("job name", s.Name); err != nil {
			return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	var names []string
	for _, kv := range s.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !shellgen.ValidEnvName(name) {
			return jobdir.Job{}, fmt.Errorf("%w: invalid environment variable %q: want NAME=VALUE with NAME made of letters, digits and _", ErrUsage, kv)
		}
		names = append(names, name)
	}
	if s.Grace == 0 {
		s.Grace = DefaultGrace
	}
	m := jobdir.Meta{
		Version:   jobdir.Version,
		Name:      s.Name,
		Workspace: c.workspace,
		Shell:     s.Shell,
		Cwd:       s.Cwd,
		Env:       names,
		Stdin:     s.Stdin,
	}
	if len(s.Argv) == 1 {
		m.Command = s.Argv[0]
	} else {
		q, err := shellgen.QuoteArgv(s.Argv)
		if err != nil {
			return jobdir.Job{}, fmt.Errorf("%w: command: %w", ErrUsage, err)
		}
		m.Command, m.Argv, m.Shell = q, s.Argv, ""
	}
	if m.Env == nil {
		m.Env = []string{}
	}
	if s.Timeout > 0 {
		m.Timeout = s.Timeout.String()
	}
	for attempt := 0; ; attempt++ {
		now := time.Now()
		m.ID = jobdir.NewID(now)
		m.StartedAt = now.UTC().Truncate(time.Millisecond)
		script, err := shellgen.LaunchScript(shellgen.Launch{Target: c.target(), Meta: m, Env: s.Env, Timeout: s.Timeout, Grace: s.Grace,
			Stdin: s.Stdin, LineBuffered: s.LineBuffered,
			Prune: c.autoPrune(now)})
		if err != nil {
			return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		var (
			job    *jobdir.Job
			refErr *shellgen.RefError
		)
		err = c.exec(ctx, script, false, func(ev shellgen.Event) error {
			switch {
			case ev.Job != nil:
				j := c.derive(ev.Job)
				job = &j
			case ev.Err != nil:
				refErr = ev.Err
			}
			return nil
		})
		if err != nil {
			return jobdir.Job{}, fmt.Errorf("starting job: %w", err)
		}
		if refErr != nil && refErr.Kind == "exists" && attempt < 3 {
			continue
		}
		if refErr != nil {
			return jobdir.Job{}, refError(refErr)
		}
		if job == nil {
			return jobdir.Job{}, errors.New("starting job: the launcher reported nothing")
		}
		return *job, nil
	}
}

// collect runs a script that reports on jobs and gathers the jobs and the
// errors it reported.
func (c *Client) collect(ctx context.Context, script string, watch bool) ([]jobdir.Job, bool, error) {
	var (
		jobs     []jobdir.Job
		errs     []error
		timedOut bool
	)
	err := c.exec(ctx, script, watch, func(ev shellgen.Event) error {
		switch {
		case ev.Job != nil:
			jobs = append(jobs, c.derive(ev.Job))
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		case ev.TimedOut:
			timedOut = true
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return jobs, timedOut, errors.Join(errs...)
}

// Status reports on the jobs named by refs (ids or names). It returns the
// jobs it found and an error for each it did not.
func (c *Client) Status(ctx context.Context, refs ...string) ([]jobdir.Job, error) {
	script, err := shellgen.StatusScript(c.target(), refs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, _, err := c.collect(ctx, script, false)
	return jobs, err
}

// ListOptions selects jobs for List.
type ListOptions struct {
	// Status keeps only jobs with this status ("" for all).
	Status jobdir.Status
	// Search keeps jobs whose id, name or command contains it, ignoring case.
	Search string
	// Limit is the page size (0: no limit).
	Limit int
	// Cursor continues after the page that returned it.
	Cursor string
	// AllWorkspaces lists jobs of every workspace.
	AllWorkspaces bool
}

// Page is one page of List, newest job first.
type Page struct {
	Jobs []jobdir.Job `json:"jobs"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// List returns one page of jobs, newest first. Without filters, a page
// reads the directory names and the files of the jobs on the page only.
func (c *Client) List(ctx context.Context, o ListOptions) (Page, error) {
	page := Page{Jobs: []jobdir.Job{}}
	next, err := c.ListFunc(ctx, o, func(j jobdir.Job) error {
		page.Jobs = append(page.Jobs, j)
		return nil
	})
	page.Next = next
	return page, err
}

// ListFunc is List that hands each job to fn as the host reports it, so
// that a long list is never held in memory. It returns the cursor of the
// next page ("" on the last).
func (c *Client) ListFunc(ctx context.Context, o ListOptions, fn func(jobdir.Job) error) (string, error) {
	t := c.target()
	if o.AllWorkspaces {
		t.Workspace = ""
	}
	q := shellgen.List{AllWorkspaces: o.AllWorkspaces, Before: o.Cursor}
	filtered := o.Status != "" || o.Search != ""
	if o.Limit > 0 && !filtered {
		q.Max = o.Limit
	}
	script, err := shellgen.ListScript(t, q)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUsage, err)
	}
	search := strings.ToLower(o.Search)
	var (
		n          int
		last, next string
		errs       []error
	)
	err = c.exec(ctx, script, false, func(ev shellgen.Event) error {
		switch {
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
			return nil
		case ev.More:
			next = last
			return nil
		case ev.Job == nil:
			return nil
		}
		j := c.derive(ev.Job)
		if o.Status != "" && j.Status != o.Status {
			return nil
		}
		if search != "" && !strings.Contains(strings.ToLower(j.ID+"\x00"+j.Name+"\x00"+j.Command), search) {
			return nil
		}
		if o.Limit > 0 && n == o.Limit {
			next = last
			return shellgen.ErrStop
		}
		n++
		last = j.ID
		return fn(j)
	})
	if err != nil {
		return "", err
	}
	return next, errors.Join(errs...)
}

// LogOptions selects what Logs prints.
type LogOptions struct {
	// Stderr reads stderr.log instead of stdout.log; All reads both.
	Stderr, All bool
	// At most one of these picks the range (none: the whole log): the last
	// Tail lines, the first Head lines, the last Bytes bytes, the bytes
	// from Offset (when FromOffset), or, with New, the bytes that Reader
	// ("" for "default") has not read yet. A reader's cursor is kept in
	// the job directory, so successive calls from any process or machine
	// each get only unread output. Offset and New stop before an
	// incomplete UTF-8 character while the job runs.
	Tail, Head int
	Bytes      int64
	Offset     int64
	FromOffset bool
	New        bool
	Reader     string
	// Follow keeps printing what is appended until the job ends.
	Follow bool
}

// LogRange says which bytes of one log a read returned: [Offset, Next).
type LogRange struct {
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Next   int64  `json:"next_offset"`
}

// LogResult is what Logs read: the job as it was at the end of the read and
// the range of each log.
type LogResult struct {
	Job    jobdir.Job
	Ranges []LogRange
}

// Logs copies a job's logs, byte for byte: stdout.log to stdout and
// stderr.log to stderr.
func (c *Client) Logs(ctx context.Context, ref string, o LogOptions, stdout, stderr io.Writer) (LogResult, error) {
	streams := []string{"stdout"}
	switch {
	case o.All:
		streams = []string{"stdout", "stderr"}
	case o.Stderr:
		streams = []string{"stderr"}
	}
	script, err := shellgen.LogsScript(c.target(), shellgen.Logs{
		Ref: ref, Streams: streams, Tail: o.Tail, Head: o.Head, Bytes: o.Bytes,
		Offset: o.Offset, HasOffset: o.FromOffset, New: o.New, Reader: o.Reader, Follow: o.Follow,
	})
	if err != nil {
		return LogResult{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if w, ok := c.rt.(Watcher); ok && o.Follow {
		return c.watchLogs(ctx, w, ref, o, stdout, stderr)
	}
	var (
		res  LogResult
		errs []error
	)
	ranges := map[string]int{}
	err = c.exec(ctx, script, o.Follow, func(ev shellgen.Event) error {
		switch {
		case ev.Job != nil:
			res.Job = c.derive(ev.Job)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		case ev.Data != nil:
			w := stdout
			if ev.Stream == "stderr" {
				w = stderr
			}
			n, err := io.Copy(w, ev.Data)
			if err != nil {
				return err
			}
			i, ok := ranges[ev.Stream]
			if !ok {
				i = len(res.Ranges)
				ranges[ev.Stream] = i
				res.Ranges = append(res.Ranges, LogRange{Stream: ev.Stream, Offset: ev.Offset})
			}
			res.Ranges[i].Next = ev.Offset + n
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, errors.Join(errs...)
}

// watchLogs follows a job's logs on this machine: it prints what the logs
// hold, then reads what is appended whenever fsnotify reports a write, and
// once exit_code appears (or, checked every second, the wrapper is gone)
// drains the last bytes and returns.
func (c *Client) watchLogs(ctx context.Context, w Watcher, ref string, o LogOptions, stdout, stderr io.Writer) (LogResult, error) {
	first := o
	first.Follow = false
	res, err := c.Logs(ctx, ref, first, stdout, stderr)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := w.Watch(ctx, []string{res.Job.Dir})
	if err != nil {
		return res, err
	}
	drain := func() error {
		for i := range res.Ranges {
			r := &res.Ranges[i]
			path, out := res.Job.StdoutPath, stdout
			if r.Stream == "stderr" {
				path, out = res.Job.StderrPath, stderr
			}
			n, err := copyFrom(out, path, r.Next)
			r.Next += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !res.Job.Status.Ended() && res.Job.Status != jobdir.StatusUnreadable {
		// Drain, then look at the status, then drain again below: what the
		// job wrote before it ended is printed before Logs returns.
		if err := drain(); err != nil {
			return res, err
		}
		look := false
		select {
		case name := <-events:
			look = name == jobdir.ExitCodeFile
		case <-tick.C:
			look = true
		case <-ctx.Done():
			return res, ctx.Err()
		}
		if look {
			jobs, err := c.Status(ctx, res.Job.ID)
			if err != nil {
				return res, err
			}
			res.Job = jobs[0]
		}
	}
	return res, drain()
}

// copyFrom copies the file at path from offset to its current end.
func copyFrom(w io.Writer, path string, offset int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading log: %w", err)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("copying log: %w", err)
	}
	return n, nil
}

// WaitOptions tunes Wait.
type WaitOptions struct {
	// Any returns when the first job ends.
	Any bool
	// Timeout gives up after this long with ErrTimeout (0: never).
	Timeout time.Duration
}

// Wait blocks until the jobs have ended and returns them. The host polls;
// the caller holds one connection. On timeout it returns the jobs as they
// are and an error wrapping ErrTimeout.
func (c *Client) Wait(ctx context.Context, refs []string, o WaitOptions) ([]jobdir.Job, error) {
	if w, ok := c.rt.(Watcher); ok {
		return c.watchWait(ctx, w, refs, o)
	}
	script, err := shellgen.WaitScript(c.target(), shellgen.Wait{Refs: refs, Any: o.Any, Timeout: o.Timeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, timedOut, err := c.collect(ctx, script, true)
	if err == nil && timedOut {
		err = fmt.Errorf("waiting %s: %w", o.Timeout, ErrTimeout)
	}
	return jobs, err
}

// watchWait waits by watching the job directories: a new exit_code wakes
// it at once. A wrapper killed with SIGKILL changes no file, so it also
// looks again every second.
func (c *Client) watchWait(ctx context.Context, w Watcher, refs []string, o WaitOptions) ([]jobdir.Job, error) {
	jobs, err := c.Status(ctx, refs...)
	if err != nil {
		return jobs, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := make([]string, len(jobs))
	dirs := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i], dirs[i] = j.ID, j.Dir
	}
	events, err := w.Watch(ctx, dirs)
	if err != nil {
		return nil, err
	}
	var deadline <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if jobs, err = c.Status(ctx, ids...); err != nil {
			return jobs, err
		}
		if waitDone(jobs, o.Any) {
			return jobs, nil
		}
		select {
		case name := <-events:
			if name != jobdir.ExitCodeFile {
				continue
			}
		case <-tick.C:
		case <-deadline:
			return jobs, fmt.Errorf("waiting %s: %w", o.Timeout, ErrTimeout)
		case <-ctx.Done():
			return jobs, ctx.Err()
		}
	}
}

// waitDone reports whether all jobs (or, with any, one job) have ended.
func waitDone(jobs []jobdir.Job, any bool) bool {
	ended := 0
	for _, j := range jobs {
		if j.Status.Ended() || j.Status == jobdir.StatusUnreadable {
			ended++
		}
	}
	return ended == len(jobs) || any && ended > 0
}

// Send writes data to the standard input of a job started with Stdin, or
// with eof closes it, so that the job reads end of file. It returns the job.
func (c *Client) Send(ctx context.Context, ref string, data io.Reader, eof bool) (jobdir.Job, error) {
	script, err := shellgen.SendScript(c.target(), ref, eof)
	if err != nil {
		return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if data == nil || eof {
		data = strings.NewReader("")
	}
	var (
		job  jobdir.Job
		errs []error
	)
	err = c.execStdin(ctx, script, data, func(ev shellgen.Event) error {
		switch {
		case ev.Job != nil:
			job = c.derive(ev.Job)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		}
		return nil
	})
	if err != nil {
		return job, err
	}
	return job, errors.Join(errs...)
}

// StopOptions tunes Stop.
type StopOptions struct {
	// Signal is sent first ("" for TERM); KILL follows after Grace
	// (DefaultGrace when 0).
	Signal string
	Grace  time.Duration
	// All stops every job of the workspace that has live processes.
	All bool
}

// Stop stops jobs and returns once their process groups are gone. It is
// idempotent: a job that has ended keeps its status, and only processes it
// left behind that can be tied to it are killed.
func (c *Client) Stop(ctx context.Context, refs []string, o StopOptions) ([]jobdir.Job, error) {
	if o.Signal == "" {
		o.Signal = "TERM"
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	script, err := shellgen.StopScript(c.target(), shellgen.Stop{Refs: refs, All: o.All, Signal: o.Signal, Grace: o.Grace})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	jobs, _, err := c.collect(ctx, script, false)
	return jobs, err
}

// Remove deletes jobs and their files. A job with live processes is
// refused with ErrBusy unless force, which stops it first.
func (c *Client) Remove(ctx context.Context, refs []string, force bool) ([]string, error) {
	return c.remove(ctx, shellgen.Remove{Refs: refs, Force: force, Grace: DefaultGrace})
}

func (c *Client) remove(ctx context.Context, r shellgen.Remove) ([]string, error) {
	t := c.target()
	script, err := shellgen.RemoveScript(t, r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		removed []string
		errs    []error
	)
	err = c.exec(ctx, script, false, func(ev shellgen.Event) error {
		switch {
		case ev.Removed != "":
			removed = append(removed, ev.Removed)
		case ev.Err != nil:
			errs = append(errs, refError(ev.Err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return removed, errors.Join(errs...)
}

// PruneOptions selects the ended jobs Prune removes: those beyond the
// newest Keep ended jobs, and those that ended more than OlderThan ago.
type PruneOptions struct {
	Keep      int
	OlderThan time.Duration
	// DryRun reports what would be removed without removing it.
	DryRun bool
}

// Prune removes ended jobs of the workspace (never running, unreadable or
// still-busy ones) and returns them.
func (c *Client) Prune(ctx context.Context, o PruneOptions) ([]jobdir.Job, error) {
	cutoff := time.Now().Add(-o.OlderThan)
	var victims []jobdir.Job
	kept := 0
	_, err := c.ListFunc(ctx, ListOptions{}, func(j jobdir.Job) error {
		if !j.Status.Ended() {
			return nil
		}
		ended := j.StartedAt
		if j.EndedAt != nil {
			ended = *j.EndedAt
		}
		if kept < o.Keep && (o.OlderThan <= 0 || ended.After(cutoff)) {
			kept++
			return nil
		}
		victims = append(victims, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.DryRun || len(victims) == 0 {
		return victims, nil
	}
	dirs := make([]string, len(victims))
	for i, j := range victims {
		dirs[i] = j.Dir
	}
	removed, err := c.remove(ctx, shellgen.Remove{Dirs: dirs})
	victims = slices.DeleteFunc(victims, func(j jobdir.Job) bool { return !slices.Contains(removed, j.Dir) })
	return victims, err
}
