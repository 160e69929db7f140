package bgjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Run's pruning pass: after a launch the host removes, in the background,
// a bounded number of the ended jobs beyond the newest DefaultKeep that
// ended more than DefaultMaxAge ago: the rule of Prune, both limits held
// (see PruneOptions).
const (
	DefaultKeep   = 1000
	DefaultMaxAge = 7 * 24 * time.Hour
)

// DefaultPruneEvery is how often Run starts the pruning pass: one run in
// DefaultPruneEvery, at random. Each pass removes up to 20 jobs, so the
// passes keep up with any rate of runs, and the launch script of the other
// runs carries no pruning code.
const DefaultPruneEvery = 8

// WithAutoPruneEvery makes one run in n, at random, start the pruning pass
// (1: every run; DefaultPruneEvery without this option).
func WithAutoPruneEvery(n int) ClientOption {
	return func(c *Client) { c.pruneEvery = max(n, 1) }
}

// WithAutoPrune sets what Run's opportunistic pruning keeps: the newest
// keep ended jobs and those that ended less than maxAge ago; it removes
// only jobs beyond both (0 for either: no such limit; both 0: no pruning
// on Run). Without this option it keeps DefaultKeep and DefaultMaxAge.
func WithAutoPrune(keep int, maxAge time.Duration) ClientOption {
	return func(c *Client) { c.pruneKeep, c.pruneAge = keep, maxAge }
}

// autoPrune returns the rule of Run's pruning pass (nil: no pass).
func (c *Client) autoPrune() *shellgen.Prune {
	if c.pruneKeep <= 0 && c.pruneAge <= 0 || c.pruneEvery > 1 && rand.IntN(c.pruneEvery) != 0 {
		return nil
	}
	return &shellgen.Prune{Keep: max(c.pruneKeep, 0), OlderThan: max(c.pruneAge, 0), Both: true}
}

// Run starts a job and returns as soon as it is running.
func (c *Client) Run(ctx context.Context, s Spec) (jobdir.Job, error) {
	if err := s.Validate(); err != nil {
		return jobdir.Job{}, err
	}
	asked := s.Port != 0 || s.AutoPort
	s, err := c.takePort(ctx, s)
	if err != nil {
		return jobdir.Job{}, err
	}
	job, notStarted, err := c.start(ctx, s)
	if err != nil && notStarted && asked {
		c.unport(ctx, s)
	}
	return job, err
}

// start starts the job of s, its port taken, and returns it; or an error
// and whether the job is known not to have started (notStarted: refused,
// or never launched), which a launch that failed otherwise cannot tell.
func (c *Client) start(ctx context.Context, s Spec) (job jobdir.Job, notStarted bool, err error) {
	m, err := runMeta(s, c.workspace)
	if err != nil {
		return jobdir.Job{}, true, err
	}
	if m.After, err = c.resolveAfter(ctx, s.After); err != nil {
		return jobdir.Job{}, true, err
	}
	if m.AfterOK, err = c.resolveAfter(ctx, s.AfterOK); err != nil {
		return jobdir.Job{}, true, err
	}
	// A launch tried again (a new id) reports the same jobs of the name.
	held := map[string]bool{}
	for attempt := 0; ; attempt++ {
		job, refErr, err := c.launchOnce(ctx, s, stampMeta(m, s.ID, time.Now()), held)
		switch {
		case errors.Is(err, ErrUsage):
			return jobdir.Job{}, true, err
		case err != nil:
			return jobdir.Job{}, false, doing("starting job", err)
		case errors.Is(refErr, ErrExists) && s.ID == "" && attempt < 3:
			// The id Run made is another job's: a new one is made.
			continue
		case refErr != nil:
			return jobdir.Job{}, true, refErr
		case job == nil:
			return jobdir.Job{}, false, errors.New("starting job: the launcher reported nothing")
		}
		return *job, false, nil
	}
}

// runMeta is the meta.json of the job s describes in workspace, but for
// what each launch stamps (stampMeta) and the jobs it waits for, which
// Run resolves: the names of its environment variables, not their
// values; a PTY job's stdin and terminal size; a command of several
// words quoted as one script, the words kept besides.
func runMeta(s Spec, workspace string) (jobdir.Meta, error) {
	names := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	m := jobdir.Meta{
		Version:    jobdir.Version,
		Name:       s.Name,
		Workspace:  workspace,
		Shell:      s.Shell,
		Cwd:        s.Cwd,
		Env:        names,
		Stdin:      s.Stdin || s.PTY, // Send types into a PTY job's terminal.
		MaxLogSize: s.MaxLogSize,
		Merge:      s.Merge,
		Owner:      s.Owner,
		PTY:        s.PTY,
		Slots:      s.Slots,
		Ulimits:    s.Ulimits,
		Port:       s.Port,
	}
	if len(s.Labels) > 0 {
		m.Labels = s.Labels
	}
	if s.PTY {
		m.PTYCols, m.PTYRows = cmp.Or(s.PTYCols, DefaultPTYCols), cmp.Or(s.PTYRows, DefaultPTYRows)
	}
	if len(s.Argv) == 1 {
		m.Command = s.Argv[0]
	} else {
		q, err := shellgen.QuoteArgv(s.Argv)
		if err != nil {
			return jobdir.Meta{}, fmt.Errorf("%w: command: %w", ErrUsage, err)
		}
		m.Command, m.Argv, m.Shell = q, s.Argv, ""
	}
	if s.Timeout > 0 {
		m.Timeout = s.Timeout.String()
	}
	return m, nil
}

// stampMeta gives m the id and times of a launch at now: id, or a new one
// when it is "", and the start time, or, for a job that waits for its
// turn, the time it was queued.
func stampMeta(m jobdir.Meta, id string, now time.Time) jobdir.Meta {
	m.ID = id
	if m.ID == "" {
		m.ID = jobdir.NewID(now)
	}
	m.StartedAt, m.QueuedAt = now.UTC().Truncate(time.Millisecond), nil
	if m.Slots > 0 || len(m.After)+len(m.AfterOK) > 0 {
		// It waits for its turn: it starts when its command does,
		// which its wrapper records (jobdir.Meta.QueuedAt).
		q := m.StartedAt
		m.StartedAt, m.QueuedAt = time.Time{}, &q
	}
	return m
}

// launchOnce makes one launch of the job of s, whose meta.json is m, and
// returns the job it started, or the refusal the launcher reported
// (refused), or the error of a launch that failed otherwise. It hands
// s.NameHeld each job of the name the launch reports, once for each id
// (held).
func (c *Client) launchOnce(ctx context.Context, s Spec, m jobdir.Meta, held map[string]bool) (job *jobdir.Job, refused, err error) {
	grace, _ := graceOf(s.Grace)
	l := shellgen.Launch{Target: c.target(), Meta: m, Env: s.Env, Timeout: s.Timeout, Grace: grace,
		LineBuffered: s.LineBuffered, Replace: s.Replace, Prune: c.autoPrune(), Cgroup: s.Memory > 0 || s.CPUs > 0}
	err = c.launch(ctx, l, records.Handler{
		Job: c.jobs(func(j jobdir.Job, outcome string) error {
			switch outcome {
			case records.OutcomeHeld, records.OutcomeReplaced:
				if s.NameHeld != nil && !held[j.ID] {
					held[j.ID] = true
					s.NameHeld(j, outcome == records.OutcomeReplaced)
				}
			default:
				job = &j
			}
			return nil
		}),
		Refused: c.refused(func(err error) error { refused = err; return nil }),
	})
	return job, refused, err
}

// launch launches the job of l and hands h what the launch reports: the
// runtime's answer where it gives one (Answerer: a launch made in Go),
// else launch.sh's. A --replace launch waits for its name's lock and
// stops jobs: it watches its caller, and ends where it is once the caller
// is gone, up to making its job's directory (launch.sh). An interrupt
// never cuts a launch short (execLaunch).
func (c *Client) launch(ctx context.Context, l shellgen.Launch, h records.Handler) error {
	req, err := shellgen.LaunchRequest(l)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return c.execLaunch(ctx, req, l.Replace, h)
}

// resolveAfter returns the ids of the jobs refs name (Spec.After): a
// queued job waits for jobs, never for whatever a name comes to mean, so
// no cycle can go through names. A ref that names no job fails the run.
func (c *Client) resolveAfter(ctx context.Context, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	jobs, err := c.Status(ctx, refs...)
	if err != nil {
		return nil, doing("after", err)
	}
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if !slices.Contains(ids, j.ID) {
			ids = append(ids, j.ID)
		}
	}
	return ids, nil
}
