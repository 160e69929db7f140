package bgjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// Run's opportunistic pruning: after each launch the host removes, in the
// background, up to autoPruneMax ended jobs of the workspace beyond the
// newest DefaultKeep or started more than DefaultMaxAge ago.
const (
	DefaultKeep   = 1000
	DefaultMaxAge = 7 * 24 * time.Hour
	autoPruneMax  = 20
)

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
	// MaxLogSize, when positive, keeps each log's newest MaxLogSize/2 to
	// MaxLogSize bytes on disk, checked every second; the older bytes are
	// dropped (the file's size and offsets stay as they were) and counted
	// in the job's StdoutDropped and StderrDropped. It needs fallocate
	// --punch-hole on the host (Linux).
	MaxLogSize int64
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
		Version:    jobdir.Version,
		Name:       s.Name,
		Workspace:  c.workspace,
		Shell:      s.Shell,
		Cwd:        s.Cwd,
		Env:        names,
		Stdin:      s.Stdin,
		MaxLogSize: s.MaxLogSize,
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
			Stdin: s.Stdin, LineBuffered: s.LineBuffered, MaxLogSize: s.MaxLogSize,
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
