// Package jobdir owns bgjob's on-disk format: the layout of a job directory,
// the meta.json record, the rules for names, and the derivation of a job's
// status from the files its wrapper and bgjob leave behind.
//
// A job lives in <root>/<workspace>/<id>/. Each file there is written once
// by one party (or, for stop, by whichever stop comes first), and every file
// read while the job runs is written atomically (temporary file, then
// rename), so readers never need a lock:
//
//	meta.json       written once by the launcher, before the job is visible
//	job.sh          the generated wrapper script
//	stdout.log      the command's standard output (appended)
//	stderr.log      the command's standard error (appended)
//	exit_code       written by the wrapper when the command has ended, in
//	                one write (read only whole); its time is the job's end
//	ended_at        written by wrappers of earlier versions before exit_code
//	stop            written by bgjob stop or the timeout before signalling
//	STREAM.dropped  the --max-log-size capper's count of dropped bytes
//	stdin, cursor-* the --stdin FIFO and the read cursors of logs --new
//	terminal        a --pty job's terminal device and size (bgjob attach)
//
// See docs/format.md for the full specification.
package jobdir

import (
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Version is the meta.json format version this package writes.
const Version = 1

// File names inside a job directory.
const (
	MetaFile     = "meta.json"
	ScriptFile   = "job.sh"
	StdoutFile   = "stdout.log"
	StderrFile   = "stderr.log"
	ExitCodeFile = "exit_code"
	EndedFile    = "ended_at"
	StopFile     = "stop"
	ReadyFile    = "ready_at"
)

// DefaultWorkspace is the workspace used when none is given.
const DefaultWorkspace = "default"

// Status is what became of a job.
type Status string

// The statuses a job can have.
const (
	// StatusRunning: the wrapper process is alive and no exit_code exists.
	StatusRunning Status = "running"
	// StatusExited: exit_code exists and bgjob did not stop the job.
	StatusExited Status = "exited"
	// StatusKilled: exit_code exists and records a signal sent by bgjob stop
	// or by the job's timeout.
	StatusKilled Status = "killed"
	// StatusLost: no exit_code, and the wrapper is gone (killed with
	// SIGKILL, or the host rebooted). The exit status is unknown.
	StatusLost Status = "lost"
	// StatusUnreadable: the job's files cannot be read as a job's: meta.json
	// is missing, too large, cannot be parsed or names another directory,
	// or exit_code holds no status. Job.Error says which.
	StatusUnreadable Status = "unreadable"
	// StatusQueued: the wrapper is alive and waits for the job's turn
	// (run --slots, --after, --after-ok): the command has not started.
	// Job.Queued says what it waits for.
	StatusQueued Status = "queued"
	// StatusNotRun: the job ended without its command ever running: a job
	// of --after-ok did not exit 0 (Job.Reason "after_ok", Job.Error says
	// which). There is no exit status.
	StatusNotRun Status = "not_run"
)

// Ended reports whether s is a final status.
func (s Status) Ended() bool {
	return s == StatusExited || s == StatusKilled || s == StatusLost || s == StatusNotRun
}

// Active reports whether the job's wrapper is alive and the job has not
// ended: running, or queued for its turn. It is the one rule for "is the
// job still going" (a follow goes on, a stop signals, a session's owner
// keeps it). An unreadable job is neither active nor ended: bgjob cannot
// tell, and its live processes, counted apart, say whether anything of it
// still runs.
func (s Status) Active() bool {
	return s == StatusRunning || s == StatusQueued
}

// Statuses returns every status a job can have.
func Statuses() []Status {
	return []Status{StatusRunning, StatusQueued, StatusExited, StatusKilled, StatusLost, StatusNotRun, StatusUnreadable}
}

// ParseStatus checks that s names a status.
func ParseStatus(s string) (Status, error) {
	if st := Status(s); slices.Contains(Statuses(), st) {
		return st, nil
	}
	return "", fmt.Errorf("unknown status %q (want running, queued, exited, killed, lost, not_run or unreadable)", s)
}

// The values of Meta.Buffering: what --line-buffered applied on a host
// with stdbuf(1), and on one without it.
const (
	BufferingStdbuf   = "stdbuf -oL -eL, PYTHONUNBUFFERED=1"
	BufferingNoStdbuf = "PYTHONUNBUFFERED=1 (the host has no stdbuf)"
)

// Meta is the content of meta.json: everything that describes a job and
// does not change after it starts.
type Meta struct {
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Workspace string `json:"workspace"`
	// Command is the command as a shell script: the script string the user
	// gave, or the user's argv, each word quoted.
	Command string `json:"command"`
	// Argv is the user's argv when the job was started from several words.
	Argv []string `json:"argv,omitempty"`
	// Shell is the shell that runs Command ("" for an argv job).
	Shell string `json:"shell,omitempty"`
	// Cwd is the working directory as given ("" for the directory the
	// launcher ran in: the caller's for local jobs, home for SSH ones).
	Cwd string `json:"cwd"`
	// Env lists the names of the variables set with --env.
	Env []string `json:"env"`
	// Timeout is the wrapper-enforced time limit ("" for none).
	Timeout string `json:"timeout,omitempty"`
	// Stdin reports that the command reads the FIFO stdin in the job
	// directory (bgjob send) rather than /dev/null.
	Stdin bool `json:"stdin,omitempty"`
	// MaxLogSize caps the bytes each log keeps on disk (0: no cap).
	MaxLogSize int64 `json:"max_log_size,omitempty"`
	// Merge reports that the command's stderr goes to stdout.log too (one
	// ordered stream; stderr.log holds only the wrapper's own messages).
	Merge bool `json:"merge,omitempty"`
	// PTY reports that the command runs on a pseudo-terminal of PTYCols
	// columns by PTYRows rows (run --pty): stdout.log holds the terminal's
	// output, stdout and stderr in one stream, lines ending in "\r\n".
	PTY     bool `json:"pty,omitempty"`
	PTYCols int  `json:"pty_cols,omitempty"`
	PTYRows int  `json:"pty_rows,omitempty"`
	// Slots, when positive, queues the job on its host behind the other
	// slotted jobs of its workspace: it starts, in the order the host
	// queued it, once fewer than Slots of them run (run --slots).
	Slots int `json:"slots,omitempty"`
	// Port is the TCP port the job was given (run --port): one free on
	// its host when it started, passed in its environment (PORT).
	Port int `json:"port,omitempty"`
	// After and AfterOK are the ids of the jobs (same host and workspace)
	// that must have ended before the command starts; with AfterOK each
	// must have exited 0, else the job ends not run (run --after,
	// --after-ok).
	After   []string `json:"after,omitempty"`
	AfterOK []string `json:"after_ok,omitempty"`
	// QueuedAt is when a job that waits for its turn (Slots, After,
	// AfterOK) was queued, by the clock of the machine that ran bgjob (nil
	// for other jobs, and for jobs of earlier versions).
	QueuedAt *time.Time `json:"queued_at,omitempty"`
	// StartedAt is when the job started, by the clock of the machine that
	// ran bgjob. A job with QueuedAt has none in meta.json: in a Job it
	// is when its command started (the started_at file, by the host's
	// clock), zero and left out of the JSON until then.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Owner is the process the job belongs to, a bgjob mcp server that
	// started it (nil for a job started any other way).
	Owner *Owner `json:"owner,omitempty"`
	// Labels are the job's KEY=VALUE labels (run --label; ValidateLabel
	// says which it accepts), for selecting jobs: ls, stop, wait, events
	// and prune --label. The MCP server labels its jobs mcp.client=NAME.
	Labels map[string]string `json:"labels,omitempty"`
	// Ulimits are the resource limits the wrapper sets before the command
	// starts (run --ulimit), in Docker's names and units.
	Ulimits []Ulimit `json:"ulimits,omitempty"`

	// The fields only the host knows, written by the wrapper before the
	// command starts. Buffering says what --line-buffered applied ("" when
	// not asked for, else BufferingStdbuf or BufferingNoStdbuf); Umask is the umask the command runs with, the
	// caller's (octal, e.g. "0022").
	Buffering string `json:"buffering,omitempty"`
	Umask     string `json:"umask,omitempty"`
	// HostStartedAt is the host's clock when the wrapper started, as
	// ended_at is the host's (nil where its date(1) printed no time, and
	// for jobs of earlier versions): Job.Duration measures by one clock.
	HostStartedAt *time.Time `json:"host_started_at,omitempty"`

	// The identity of the wrapper process, written by the launcher on the
	// host: its pid (also the job's process group), its start time (clock
	// ticks since boot, field 22 of /proc/PID/stat, or `ps -o lstart=`
	// where /proc is missing) and the host's boot id.
	PID       int    `json:"pid"`
	PGID      int    `json:"pgid"`
	ProcStart string `json:"proc_start"`
	BootID    string `json:"boot_id"`
}

// OwnerMCP is the Kind of an Owner that is a bgjob mcp server.
const OwnerMCP = "mcp"

// Owner identifies the process a job belongs to, so that its jobs can be
// stopped once it is provably gone (bgjob mcp at startup, bgjob prune).
// The process runs on the machine that started the job, which over SSH is
// not the job's host: Hostname, MachineID and PIDNamespace say which
// machine that was, and only there can PID, ProcStart and BootID be
// checked.
type Owner struct {
	// Kind says what the owner is: OwnerMCP.
	Kind string `json:"kind"`
	// PID, ProcStart and BootID are the owner's identity as a job's is:
	// its pid, its start time (clock ticks since boot, field 22 of
	// /proc/PID/stat) and its machine's boot id ("" where unknown).
	PID       int    `json:"pid"`
	ProcStart string `json:"proc_start"`
	BootID    string `json:"boot_id"`
	// Hostname, MachineID (/etc/machine-id, "" where there is none) and
	// PIDNamespace (the readlink of /proc/self/ns/pid, e.g.
	// "pid:[4026531836]") name the machine, and the pid namespace on it,
	// where PID means something.
	Hostname     string `json:"hostname"`
	MachineID    string `json:"machine_id,omitempty"`
	PIDNamespace string `json:"pid_ns,omitempty"`
	// Keep reports that the job stays when its owner ends (job_start's
	// keep, bgjob mcp --keep-jobs): it is never stopped for its owner.
	Keep bool `json:"keep,omitempty"`
}

// Same reports whether o and p are the same owner: the same process on the
// same machine, whatever Keep says.
func (o Owner) Same(p Owner) bool {
	return o.Kind == p.Kind && o.PID == p.PID && o.ProcStart == p.ProcStart && o.BootID == p.BootID &&
		o.Hostname == p.Hostname && o.MachineID == p.MachineID && o.PIDNamespace == p.PIDNamespace
}

// Job is a job as bgjob reports it: its Meta plus the state derived from the
// job directory. It is the --json output of every verb.
type Job struct {
	Meta
	Host     string     `json:"host"`
	Status   Status     `json:"status"`
	ExitCode *int       `json:"exit_code"`
	EndedAt  *time.Time `json:"ended_at"`
	Reason   string     `json:"reason,omitempty"`
	Signal   string     `json:"signal,omitempty"`
	// Queued, for a queued job, says what it waits for: "slot" (its turn
	// in the host's queue of slotted jobs) or "after ID" (a job of After
	// or AfterOK that has not ended).
	Queued string `json:"queued,omitempty"`
	// ReadyAt is when a line of the job's output first matched the
	// readiness pattern of run --ready (or job_start's ready_output), by
	// the clock of the machine that ran bgjob, as StartedAt is: the
	// ready_at file (nil without one).
	ReadyAt *time.Time `json:"ready_at,omitempty"`
	// StdoutDropped and StderrDropped count the leading bytes of each log
	// that the --max-log-size cap has dropped.
	StdoutDropped int64 `json:"stdout_dropped,omitempty"`
	StderrDropped int64 `json:"stderr_dropped,omitempty"`
	// LogsFull says the file system of the job's logs had no space left
	// when its command ended: the command's writes may have failed, and
	// its output be missing from the logs, which nothing else tells.
	LogsFull bool `json:"logs_full,omitempty"`
	// LiveProcesses counts the job's processes alive besides its wrapper:
	// its process group and, on Linux, the processes of the same user that
	// left it (setsid, a double fork) but carry the job's id in their
	// environment. An ended job with live processes is not removed.
	LiveProcesses int `json:"live_processes"`
	// ProcessScan is "ps" when the host has no /proc, so only the process
	// group was counted, and "none" when the look did not count the
	// processes at all (a read of the logs, run's report of the job it
	// started: LiveProcesses 0 means unknown there); "" otherwise.
	ProcessScan string `json:"process_scan,omitempty"`
	// Ports are the TCP ports the job's live processes listen on, by port
	// then address, where a look asked for them (status, ls --json, a
	// wait for a port); none otherwise.
	Ports      []Port `json:"ports,omitempty"`
	Error      string `json:"error,omitempty"`
	Dir        string `json:"dir"`
	StdoutPath string `json:"stdout_path"`
	StderrPath string `json:"stderr_path"`
}

// Port is a TCP port a job's process listens on.
type Port struct {
	// Port is the port number.
	Port int `json:"port"`
	// Proto is "tcp".
	Proto string `json:"proto"`
	// Address is the address it listens at: "0.0.0.0" or "::" for every
	// address, "127.0.0.1", "::1".
	Address string `json:"address"`
}

// String returns p as status shows it: "8000/tcp (0.0.0.0)".
func (p Port) String() string {
	return strconv.Itoa(p.Port) + "/" + p.Proto + " (" + p.Address + ")"
}

// ErrBadName is wrapped by the errors of ValidateName.
var ErrBadName = errors.New("invalid name")

// ValidateName checks that s is a safe workspace name, job id or job name:
// 1 to 64 characters from letters, digits and "._@:+-", starting with a
// letter or digit. Such a name is one file name, never "." or "..", and
// needs no quoting in JSON.
func ValidateName(kind, s string) error {
	if !isName(s) {
		return fmt.Errorf("%w: %s %q: use 1-64 letters, digits or ._@:+- starting with a letter or digit", ErrBadName, kind, s)
	}
	return nil
}

// ValidateJobName checks that s is a name a job may have: a name
// (ValidateName) that is not in the form of a job id, which every
// reference would take for the id of another job.
func ValidateJobName(s string) error {
	if err := ValidateName("job name", s); err != nil {
		return err
	}
	if IsID(s) {
		return fmt.Errorf("%w: job name %q has the form of a job id: give a name that does not", ErrBadName, s)
	}
	return nil
}

// isName reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,63}$
// (by hand, not a regexp compiled at every start of the binary).
func isName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("._@:+-", rune(c)) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// idShape is the one definition of a job id's form, 20261130T001502-0k3f9q:
// each part a class of characters (a bracket expression's inside, or one
// literal character) and how many of them. IsID, IDPattern and IDRegexp,
// which the scripts get, are made from it.
var idShape = [...]struct {
	class string
	n     int
}{{"0-9", 8}, {"T", 1}, {"0-9", 6}, {"-", 1}, {"0-9a-z", 6}}

// IsID reports whether s has the form of a job id (idShape).
func IsID(s string) bool {
	if len(s) != len(idPos) {
		return false
	}
	for i := range len(s) {
		if c := s[i]; idSets[idPos[i]][c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}

// idSets holds each class of idShape as a bit set of the bytes in it, and
// idPos the class of each byte of an id: idShape made into tables for
// IsID, which a listing of 10,000 jobs calls for each (reading idShape
// took a tenth of it). Made from the classes' ranges, at no cost to a
// start of bgjob.
var idSets, idPos = func() (sets [len(idShape)][4]uint64, pos []uint8) {
	for k, p := range idShape {
		c := p.class
		if len(c) == 1 {
			c = c + "-" + c
		}
		for i := 0; i+2 < len(c); i += 3 {
			for b := int(c[i]); b <= int(c[i+2]); b++ {
				sets[k][b>>6] |= 1 << (b & 63)
			}
		}
		for range p.n {
			pos = append(pos, uint8(k))
		}
	}
	return sets, pos
}()

// inClass reports whether c is in class: one character, or ranges a-b.
func inClass(c byte, class string) bool {
	if len(class) == 1 {
		return c == class[0]
	}
	for i := 0; i+2 < len(class); i += 3 {
		if class[i] <= c && c <= class[i+2] {
			return true
		}
	}
	return false
}

// IDPattern returns the shell pattern (case, pathname expansion) that
// matches a job id and nothing else.
func IDPattern() string {
	var b strings.Builder
	for _, p := range idShape {
		for range p.n {
			if len(p.class) == 1 {
				b.WriteString(p.class)
			} else {
				b.WriteString("[" + p.class + "]")
			}
		}
	}
	return b.String()
}

// IDRegexp returns the POSIX basic regular expression (grep, sed) of a
// job id, unanchored.
func IDRegexp() string {
	var b strings.Builder
	for _, p := range idShape {
		if len(p.class) == 1 {
			b.WriteString(strings.Repeat(p.class, p.n))
			continue
		}
		fmt.Fprintf(&b, "[%s]\\{%d\\}", p.class, p.n)
	}
	return b.String()
}

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// NewID returns a job id for a job started at t: the UTC time to the
// second, then six base-36 characters, the first two the milliseconds and
// the last four random, e.g. 20261130T001502-0k3f9q. Ids sort by start time
// to the millisecond; the launcher creates the directory exclusively, so two
// jobs never share an id.
func NewID(t time.Time) string {
	t = t.UTC()
	ms := t.Nanosecond() / int(time.Millisecond)
	var b [4]byte
	rand.Read(b[:])
	suffix := []byte{idAlphabet[ms/36], idAlphabet[ms%36], 0, 0, 0, 0}
	for i := range b {
		suffix[2+i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return t.Format("20060102T150405") + "-" + string(suffix)
}

// Paths fills the path fields of j from dir, the job's directory.
func (j *Job) Paths(dir string) {
	j.Dir = dir
	j.StdoutPath = path.Join(dir, StdoutFile)
	j.StderrPath = path.Join(dir, StderrFile)
}
