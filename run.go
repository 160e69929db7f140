package bgjob

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

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

// SetAutoPruneEvery makes one run in n, at random, start the pruning pass
// (1: every run).
func (c *Client) SetAutoPruneEvery(n int) {
	c.pruneEvery = max(n, 1)
}

// SetAutoPrune changes what Run's opportunistic pruning keeps: the newest
// keep ended jobs and those that ended less than maxAge ago; it removes
// only jobs beyond both (0 for either: no such limit; both 0: no pruning
// on Run).
func (c *Client) SetAutoPrune(keep int, maxAge time.Duration) {
	c.pruneKeep, c.pruneAge = keep, maxAge
}

// autoPrune returns the rule of Run's pruning pass (nil: no pass).
func (c *Client) autoPrune() *shellgen.Prune {
	if c.pruneKeep <= 0 && c.pruneAge <= 0 || c.pruneEvery > 1 && rand.IntN(c.pruneEvery) != 0 {
		return nil
	}
	return &shellgen.Prune{Keep: max(c.pruneKeep, 0), OlderThan: max(c.pruneAge, 0), Both: true}
}

// MaxCommand bounds the command Run accepts: the script, or the words of
// an argv together, 1 MiB. meta.json records the command (and an argv's
// words besides) and readers read at most jobdir.MaxMetaSize of it, four
// times as much.
const MaxCommand = 1 << 20

// MaxTimeout bounds Spec.Timeout: a longer one is a mistake, and would
// overflow the arithmetic of some hosts' shells.
const MaxTimeout = 10 * 365 * 24 * time.Hour

// Spec describes a job to run.
type Spec struct {
	// ID, when set, is the job's id (from jobdir.NewID): a caller that
	// starts the same job on several hosts gives it one id everywhere.
	// Run then fails, wrapping ErrExists, if the host already has a job
	// with that id. "" means Run makes a new one.
	ID string
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
	// it, TERM then KILL after Grace (nil: DefaultGrace; 0: at once).
	Timeout time.Duration
	Grace   *time.Duration
	// Stdin gives the job a FIFO as its standard input, written with Send;
	// otherwise it reads /dev/null.
	Stdin bool
	// LineBuffered asks programs to write their output line by line
	// ("stdbuf -oL -eL" where the host has it, PYTHONUNBUFFERED=1).
	LineBuffered bool
	// MaxLogSize, when positive, keeps each log's newest MaxLogSize/2 to
	// MaxLogSize bytes on disk, enforced as the log is written (the command
	// writes to a pipe the wrapper drains); the older bytes are
	// dropped (the file's size and offsets stay as they were) and counted
	// in the job's StdoutDropped and StderrDropped. It needs fallocate
	// --punch-hole on the host (util-linux): Run fails, wrapping
	// ErrNoLogCap and creating no job, on a host without it.
	MaxLogSize int64
	// Merge writes the command's stderr into stdout.log as well, so the
	// two come in one ordered stream; meta.json records it.
	Merge bool
	// Owner, unless nil, records in meta.json the process the job belongs
	// to (SelfOwner), so that StopOrphans stops the job once that process
	// is provably gone.
	Owner *jobdir.Owner
	// Replace, with Name, first stops every job of the workspace that has
	// that name and live processes, as Stop does (TERM, KILL after Grace),
	// and waits until their processes are gone (so that a port one held
	// is free), then starts this job. Runs with Replace of one name take
	// turns on the host: of several at once, the last one's job runs.
	Replace bool
	// NameHeld, unless nil, receives each job that had Name when this one
	// started: with replaced, one Replace stopped (as it was afterwards);
	// without, the newest job of the name, still running beside the new
	// one (the CLI warns). Without Replace only the newest job of the name
	// is looked at, which costs the launch no scan of the host's
	// processes. A Fleet calls it from one goroutine per host.
	NameHeld func(j jobdir.Job, replaced bool)
	// PTY runs the command on a pseudo-terminal (programs that check
	// isatty, prompts, REPLs, progress bars), without a daemon: util-linux
	// script(1) holds the terminal's master on the host. It implies Stdin:
	// Send types into the terminal, exact bytes ("\x03" is Ctrl-C, which
	// the terminal turns into SIGINT for the command). stdout.log gets the
	// raw terminal stream: stdout and stderr together, lines ending in
	// "\r\n" (termtext.Strip makes it text); stderr.log gets only the
	// messages of script and the wrapper. The exit status is the
	// command's own. Run fails, wrapping ErrNoPTY and creating no job, on
	// a host without a capable script.
	PTY bool
	// PTYCols and PTYRows are the terminal's size (0: 80 and 24).
	PTYCols, PTYRows int
}

// Default size of a PTY job's terminal.
const (
	DefaultPTYCols = 80
	DefaultPTYRows = 24
)

// maxPTYSide bounds each side of a PTY job's terminal.
const maxPTYSide = 10000

// ParsePTYSize reads a terminal size written COLSxROWS (e.g. 120x40), each
// side 1 to 10000, for Spec.PTYCols and Spec.PTYRows.
func ParsePTYSize(s string) (cols, rows int, err error) {
	c, r, ok := strings.Cut(strings.ToLower(s), "x")
	cols, err1 := strconv.Atoi(c)
	rows, err2 := strconv.Atoi(r)
	if !ok || err1 != nil || err2 != nil || cols < 1 || rows < 1 || cols > maxPTYSide || rows > maxPTYSide {
		return 0, 0, fmt.Errorf("%q is not a terminal size (want COLSxROWS, e.g. 120x40, each 1 to %d)", s, maxPTYSide)
	}
	return cols, rows, nil
}

// commandSize is the size of a command as MaxCommand counts it: its words'
// bytes together.
func commandSize(argv []string) int {
	n := 0
	for _, w := range argv {
		n += len(w)
	}
	return n
}

// Run starts a job and returns as soon as it is running.
func (c *Client) Run(ctx context.Context, s Spec) (jobdir.Job, error) {
	if len(s.Argv) == 0 {
		return jobdir.Job{}, fmt.Errorf("%w: no command given", ErrUsage)
	}
	if n := commandSize(s.Argv); n > MaxCommand {
		return jobdir.Job{}, fmt.Errorf("%w: the command is %d bytes: run accepts at most %d (1 MiB)", ErrUsage, n, MaxCommand)
	}
	if s.ID != "" && !jobdir.IsID(s.ID) {
		return jobdir.Job{}, fmt.Errorf("%w: %q is not a job id (want e.g. 20261130T001502-0k3f9q)", ErrUsage, s.ID)
	}
	if s.Name != "" {
		if err := jobdir.ValidateName("job name", s.Name); err != nil {
			return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	if s.Replace && s.Name == "" {
		return jobdir.Job{}, fmt.Errorf("%w: replace needs a job name", ErrUsage)
	}
	if s.Timeout < 0 || s.Timeout > MaxTimeout {
		return jobdir.Job{}, fmt.Errorf("%w: timeout %s: want 0 (none) to %s", ErrUsage, s.Timeout, MaxTimeout)
	}
	var names []string
	for _, kv := range s.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !shellgen.ValidEnvName(name) {
			return jobdir.Job{}, fmt.Errorf("%w: invalid environment variable %q: want NAME=VALUE with NAME made of letters, digits and _", ErrUsage, kv)
		}
		if strings.IndexByte(value, 0) >= 0 {
			return jobdir.Job{}, fmt.Errorf("%w: environment variable %s: its value holds a NUL byte, which no shell can pass", ErrUsage, name)
		}
		names = append(names, name)
	}
	grace, err := graceOf(s.Grace)
	if err != nil {
		return jobdir.Job{}, err
	}
	if s.PTY {
		s.Stdin = true
		if s.PTYCols == 0 {
			s.PTYCols = DefaultPTYCols
		}
		if s.PTYRows == 0 {
			s.PTYRows = DefaultPTYRows
		}
		if s.PTYCols < 0 || s.PTYRows < 0 || s.PTYCols > maxPTYSide || s.PTYRows > maxPTYSide {
			return jobdir.Job{}, fmt.Errorf("%w: terminal size %dx%d: want 1 to %d columns and rows", ErrUsage, s.PTYCols, s.PTYRows, maxPTYSide)
		}
	} else if s.PTYCols != 0 || s.PTYRows != 0 {
		return jobdir.Job{}, fmt.Errorf("%w: a terminal size needs PTY", ErrUsage)
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
	// A launch tried again (a new id) reports the same jobs of the name.
	held := map[string]bool{}
	for attempt := 0; ; attempt++ {
		now := time.Now()
		m.ID = s.ID
		if m.ID == "" {
			m.ID = jobdir.NewID(now)
		}
		m.StartedAt = now.UTC().Truncate(time.Millisecond)
		script, err := shellgen.LaunchScript(shellgen.Launch{Target: c.target(), Meta: m, Env: s.Env, Timeout: s.Timeout, Grace: grace,
			Stdin: s.Stdin, LineBuffered: s.LineBuffered, MaxLogSize: s.MaxLogSize,
			Replace: s.Replace, PTY: s.PTY, PTYCols: s.PTYCols, PTYRows: s.PTYRows,
			Prune: c.autoPrune()})
		if err != nil {
			return jobdir.Job{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		var (
			job    *jobdir.Job
			refErr error
		)
		err = c.exec(ctx, script, nil, false, shellgen.Handler{
			Job: c.jobs(func(j jobdir.Job, outcome string) error {
				switch outcome {
				case shellgen.OutcomeHeld, shellgen.OutcomeReplaced:
					if s.NameHeld != nil && !held[j.ID] {
						held[j.ID] = true
						s.NameHeld(j, outcome == shellgen.OutcomeReplaced)
					}
				default:
					job = &j
				}
				return nil
			}),
			Refused: refused(func(err error) error { refErr = err; return nil }),
		})
		if err != nil {
			return jobdir.Job{}, fmt.Errorf("starting job: %w", err)
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
