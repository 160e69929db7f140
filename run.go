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
	grace, _ := graceOf(s.Grace)
	var names []string
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	if s.PTY {
		s.Stdin = true
		s.PTYCols = cmp.Or(s.PTYCols, DefaultPTYCols)
		s.PTYRows = cmp.Or(s.PTYRows, DefaultPTYRows)
	}
	m := jobdir.Meta{
		Version:    jobdir.Version,
		Name:       s.Name,
		Workspace:  c.workspace,
		Shell:      s.Shell,
		Cwd:        s.Cwd,
		Env:        names,
		Stdin:      s.Stdin,
		MaxLogSize: s.MaxLogSize,
		Merge:      s.Merge,
		Owner:      s.Owner,
		PTY:        s.PTY,
	}
	if s.PTY {
		m.PTYCols, m.PTYRows = s.PTYCols, s.PTYRows
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
	m.Slots = s.Slots
	var err error
	if m.After, err = c.resolveAfter(ctx, s.After); err != nil {
		return jobdir.Job{}, err
	}
	if m.AfterOK, err = c.resolveAfter(ctx, s.AfterOK); err != nil {
		return jobdir.Job{}, err
	}
	// A launch tried again (a new id) reports the same jobs of the name.
	held := map[string]bool{}
	for attempt := 0; ; attempt++ {
		now := time.Now()
		m.ID = s.ID
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
		l := shellgen.Launch{Target: c.target(), Meta: m, Env: s.Env, Timeout: s.Timeout, Grace: grace,
			LineBuffered: s.LineBuffered, Replace: s.Replace, Prune: c.autoPrune()}
		var (
			job    *jobdir.Job
			refErr error
		)
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
			Refused: c.refused(func(err error) error { refErr = err; return nil }),
		})
		if errors.Is(err, ErrUsage) {
			return jobdir.Job{}, err
		}
		if err != nil {
			return jobdir.Job{}, doing("starting job", err)
		}
		if errors.Is(refErr, ErrExists) && s.ID == "" && attempt < 3 {
			continue
		}
		if refErr != nil {
			return jobdir.Job{}, refErr
		}
		if job == nil {
			return jobdir.Job{}, errors.New("starting job: the launcher reported nothing")
		}
		return *job, nil
	}
}

// launch launches the job of l and hands h what the launch reports: the
// runtime's answer where it gives one (Answerer: a launch made in Go),
// else launch.sh's.
func (c *Client) launch(ctx context.Context, l shellgen.Launch, h records.Handler) error {
	req, err := shellgen.LaunchRequest(l)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if a, ok := c.rt.(Answerer); ok {
		out, ok, err := a.Answer(ctx, req)
		if err != nil {
			return err
		}
		if ok {
			defer out.Close()
			_, err := h.Decode(out)
			return err
		}
	}
	// A --replace launch waits for its name's lock and stops jobs: it
	// watches its caller, and ends where it is once the caller is gone,
	// up to making its job's directory (launch.sh). An interrupt never
	// cuts a launch short (execLaunch).
	return c.execLaunch(ctx, req.Text(), l.Replace, h)
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
