package bgjob

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

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
	// Port is the TCP port the job is expected to listen on, and AutoPort
	// asks for one free on the host: Run takes it for the job before the
	// launch (shellgen.PortScript), refusing with ErrPortTaken, naming
	// what holds it when the host can tell, when something listens on it
	// or another running job of the root took it; records it in
	// meta.json (jobdir.Meta.Port) and passes it to the job in the
	// environment variable PortEnv ("": PORT). AutoPort takes one from
	// shellgen.AutoPortLow to AutoPortHigh; two runs never take the same.
	Port     int
	AutoPort bool
	PortEnv  string
	// Timeout stops the job after this long (0: never, at most
	// MaxTimeout); the host enforces it, TERM then KILL after Grace (nil:
	// DefaultGrace; 0: at once).
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
	// Slots, when positive, queues the job behind the other slotted jobs
	// of its workspace on its host: it starts, strictly in the order the
	// host queued them, once fewer than Slots of them run (each job
	// counts against its own Slots). Until then it is jobdir.StatusQueued.
	// 1 runs such jobs one after another.
	Slots int
	// After and AfterOK name jobs (ids or names, in the workspace, on the
	// host) that must end before the command starts; Run resolves them to
	// ids, and fails, wrapping ErrNotFound and making no job, when one is
	// missing. With AfterOK each must exit 0: otherwise the job ends
	// without running, jobdir.StatusNotRun. A job removed meanwhile
	// counts as ended (for AfterOK, as not having exited 0). Timeout
	// counts from the start of the command, not from the queueing.
	After, AfterOK []string
	// Labels are KEY=VALUE labels recorded in meta.json, by which
	// ListOptions, StopOptions, WaitAny's selection, EventOptions and
	// PruneOptions select jobs (jobdir.ValidateLabel says which are
	// accepted).
	Labels map[string]string
	// Ulimits are resource limits the wrapper sets before the command
	// starts (jobdir.Ulimit, Docker's names and units). A limit the host's
	// shell cannot set ends the job before its command runs: not_run,
	// reason "ulimit", its error naming the limit and why.
	Ulimits []jobdir.Ulimit
	// Memory (bytes) and CPUs (a number of CPUs), when positive, would
	// bound the job's processes together through a cgroup of their own:
	// Run fails, wrapping ErrNoCgroup and creating no job, its error
	// saying what the host has (see there).
	Memory int64
	CPUs   float64
}

// Default size of a PTY job's terminal.
const (
	DefaultPTYCols = 80
	DefaultPTYRows = 24
)

// MaxPTYSide bounds each side of a PTY job's terminal (Spec.PTYCols and
// PTYRows, Client.Resize).
const MaxPTYSide = 10000

// commandSize is the size of a command as MaxCommand counts it: its words'
// bytes together.
func commandSize(argv []string) int {
	n := 0
	for _, w := range argv {
		n += len(w)
	}
	return n
}

// Validate checks s as Run does before anything reaches a host: a
// command of at most MaxCommand bytes, a job id and a name as jobdir
// reads them, Replace with a Name, a Timeout of 0 to MaxTimeout, NAME=VALUE
// environment variables, a grace that is not negative, and a terminal
// size of 1 to 10000 a side only with PTY. Its error wraps ErrUsage; one
// about how fields go together, or the bounds of one, is a *FieldError,
// which a front end words with its own names for the fields.
func (s Spec) Validate() error {
	for _, rule := range specRules {
		err := rule(s)
		if err == nil {
			continue
		}
		if errors.Is(err, ErrUsage) {
			// checkGrace's, which Stop returns as well: it wraps
			// ErrUsage already, and goes as it is.
			return err
		}
		return &Error{Kind: KindUsage, Err: fmt.Errorf("%w: %w", ErrUsage, err)}
	}
	return nil
}

// specRules are the rules Validate checks, in its order: each returns
// what breaks it in a Spec, or nil. The first broken is the one reported.
var specRules = []func(Spec) error{
	checkCommand, checkID, checkName, checkReplace, checkTimeout,
	checkEnv, checkGrace, checkSlots, checkAfter, checkPTYSize, checkLabels, checkUlimits, checkPort,
}

// checkCommand: a command is given, of at most MaxCommand bytes.
func checkCommand(s Spec) error {
	if len(s.Argv) == 0 {
		return errors.New("no command given")
	}
	if n := commandSize(s.Argv); n > MaxCommand {
		return fmt.Errorf("the command is %d bytes: run accepts at most %d (1 MiB)", n, MaxCommand)
	}
	return nil
}

// checkID: an id given is one jobdir.NewID could have made.
func checkID(s Spec) error {
	if s.ID != "" && !jobdir.IsID(s.ID) {
		return fmt.Errorf("%q is not a job id (want e.g. 20261130T001502-0k3f9q)", s.ID)
	}
	return nil
}

// checkName: a name given is one jobdir accepts.
func checkName(s Spec) error {
	if s.Name == "" {
		return nil
	}
	return jobdir.ValidateJobName(s.Name)
}

// checkReplace: Replace stops the jobs of a name, so it needs one.
func checkReplace(s Spec) error {
	if s.Replace && s.Name == "" {
		return &FieldError{Field: "Replace", Other: "Name", format: "%[1]s needs %[2]s: it stops the jobs of that name"}
	}
	return nil
}

// checkTimeout: a Timeout of 0 (none) to MaxTimeout.
func checkTimeout(s Spec) error {
	if s.Timeout < 0 {
		return &FieldError{Field: "Timeout", format: "%[1]s must not be negative"}
	}
	if s.Timeout > MaxTimeout {
		return &FieldError{Field: "Timeout", format: "%[1]s %[3]s is longer than %[4]s", args: []any{s.Timeout, MaxTimeout}}
	}
	return nil
}

// checkEnv: each of Env is NAME=VALUE with a name a shell can set, not
// one of bgjob's own, and a value a shell can pass.
func checkEnv(s Spec) error {
	for _, kv := range s.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !shellgen.ValidEnvName(name) {
			return fmt.Errorf("invalid environment variable %q: want NAME=VALUE with NAME made of letters, digits and _", kv)
		}
		if name == "BGJOB_JOB_ID" || name == "BGJOB_JOB_DIR" {
			// The marker by which bgjob finds the job's processes that
			// left its group: another value would give them to another
			// job, or to none.
			return fmt.Errorf("environment variable %s: bgjob sets it for each job (it finds the job's processes by it)", name)
		}
		if strings.IndexByte(value, 0) >= 0 {
			return fmt.Errorf("environment variable %s: its value holds a NUL byte, which no shell can pass", name)
		}
	}
	return nil
}

// checkGrace: a Grace that is not negative, as Stop checks it.
func checkGrace(s Spec) error {
	_, err := graceOf(s.Grace)
	return err
}

// checkSlots: Slots is not negative (0: the job is not queued).
func checkSlots(s Spec) error {
	if s.Slots < 0 {
		return &FieldError{Field: "Slots", format: "%[1]s must not be negative"}
	}
	return nil
}

// checkAfter: each of After and AfterOK is a job's id or name, and not
// this job's own.
func checkAfter(s Spec) error {
	for _, ref := range append(slices.Clone(s.After), s.AfterOK...) {
		if err := jobdir.ValidateName("job", ref); err != nil {
			return fmt.Errorf("after: %w", err)
		}
		if ref == s.ID || ref == s.Name {
			return fmt.Errorf("after: %q is this job: a job cannot wait for itself", ref)
		}
	}
	return nil
}

// checkLabels: each label is one jobdir.ValidateLabel accepts.
func checkLabels(s Spec) error {
	for k, v := range s.Labels {
		if err := jobdir.ValidateLabel(k, v); err != nil {
			return err
		}
	}
	return nil
}

// checkUlimits: each limit is one jobdir accepts, given once.
func checkUlimits(s Spec) error {
	seen := map[string]bool{}
	for _, u := range s.Ulimits {
		if err := u.Validate(); err != nil {
			return err
		}
		if seen[u.Name] {
			return fmt.Errorf("%w: %s is given twice", jobdir.ErrBadUlimit, u.Name)
		}
		seen[u.Name] = true
	}
	return nil
}

// checkPTYSize: a terminal size only with PTY, 0 (the default) or 1 to
// MaxPTYSide a side.
func checkPTYSize(s Spec) error {
	switch {
	case !s.PTY && (s.PTYCols != 0 || s.PTYRows != 0):
		return &FieldError{Field: "PTYCols", Other: "PTY", format: "%[1]s goes with %[2]s"}
	case s.PTYCols < 0 || s.PTYRows < 0 || s.PTYCols > MaxPTYSide || s.PTYRows > MaxPTYSide:
		return fmt.Errorf("terminal size %dx%d: want 1 to %d columns and rows", s.PTYCols, s.PTYRows, MaxPTYSide)
	}
	return nil
}

// FieldError is a rule about a Spec's (or LogOptions') fields that
// Validate found broken:
// Field is the field at fault (as Go names it: "Replace", "Timeout",
// "PTYCols" for the terminal's size), Other the field the rule ties it to
// ("" if none).
type FieldError struct {
	Field, Other string
	// format words the rule: %[1]s names Field, %[2]s Other, args follow.
	format string
	args   []any
}

// fieldNames are the library's names for fields in a FieldError.
var fieldNames = map[string]string{"Slots": "slots", "Replace": "replace", "Name": "a job name", "Timeout": "timeout", "PTYCols": "a terminal size", "PTY": "PTY",
	"Tail": "tail", "Head": "head", "Bytes": "bytes", "Offset": "offset", "Cursor": "a cursor", "MaxBytes": "max bytes",
	"Follow": "follow"}

func (e *FieldError) Error() string { return e.Text(func(f string) string { return fieldNames[f] }) }

// Text words the error with name's names for the fields: the CLI's flags
// (--replace needs --name), the MCP server's arguments.
func (e *FieldError) Text(name func(field string) string) string {
	return fmt.Sprintf(e.format, append([]any{name(e.Field), name(e.Other)}, e.args...)...)
}

// DefaultLaunchTimeout bounds a launch, connecting included, before the
// stop of the jobs that Spec.Replace replaces (see Spec.LaunchTimeout).
const DefaultLaunchTimeout = time.Minute

// ReplaceTime is the time a launch of s may take to stop the jobs its
// Replace replaces, on top of the launch's own: twice the grace (TERM,
// grace, KILL, and a replace of the name before it); 0 without Replace.
func (s Spec) ReplaceTime() time.Duration {
	if !s.Replace {
		return 0
	}
	g, _ := graceOf(s.Grace)
	return 2 * g
}

// LaunchTimeout is how long a caller gives the launch of s, connecting
// included: DefaultLaunchTimeout and its ReplaceTime.
func (s Spec) LaunchTimeout() time.Duration { return DefaultLaunchTimeout + s.ReplaceTime() }
