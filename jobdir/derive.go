package jobdir

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// ScanProc is the process scan of a host with /proc: a job's processes
// are its process group and those that carry its id in their environment.
// The other, "ps", finds the process group only.
const ScanProc = "proc"

// ScanNone is the ProcessScan of an observation that did not look for the
// job's processes (a read of its logs, the launch's report): LiveProcesses
// is 0 there because nobody counted, not because none run.
const ScanNone = "none"

// Observation is what a reader saw of one job directory at one moment: the
// raw contents of its files and the facts about its wrapper process. The
// scripts from package shellgen gather it on the job's host.
type Observation struct {
	// Dir is the job directory's absolute path on its host.
	Dir string
	// Meta is the first line of meta.json; HasMeta reports whether the file
	// existed.
	Meta    string
	HasMeta bool
	// MetaTooLarge reports that meta.json was larger than MaxMetaSize, so
	// it was not read (Meta is "").
	MetaTooLarge bool
	// ProcStart is the start time of the process whose pid meta.json
	// records, read before exit_code; "" when no such process exists.
	ProcStart string
	// ExitCode is the first line of exit_code; HasExit reports whether the
	// file existed.
	ExitCode string
	HasExit  bool
	// EndedAt is the first line of ended_at.
	EndedAt string
	// Stop is the first line of the stop marker: "REASON SIGNAL".
	Stop string
	// BootID is the host's boot id at the time of the observation.
	BootID string
	// StdoutDropped and StderrDropped are the first lines of
	// stdout.dropped and stderr.dropped ("" when missing).
	StdoutDropped, StderrDropped string
	// Queued is the first line of the queued file, "" when missing: what
	// a job whose wrapper waits for its turn waits for.
	Queued string
	// StartedAt is the first line of the started_at file, "" when
	// missing: when the command of a job that waited for its turn
	// started, by the host's clock.
	StartedAt string
	// NotRun is the first line of the not_run file, "" when missing: why
	// a job ended without running its command.
	NotRun string
	// ReadyAt is the first line of the ready_at file, "" when missing:
	// when a line of the job's output matched its readiness pattern.
	ReadyAt string
	// LogsFull says the logs_full file is there: the logs' file system
	// had no space left when the command ended.
	LogsFull bool
	// LiveProcesses is how many of the job's processes were alive besides
	// its wrapper ("" when not looked at), and ProcessScan how they were
	// found: "proc" (the process group, and processes that left it by the
	// job id in their environment) or "ps" (the process group only).
	LiveProcesses, ProcessScan string
	// Ports are the TCP ports the job's live processes listen on, from a
	// look that asked for them (nil otherwise).
	Ports []Port
}

// Derive turns an observation into a job report. It is the only place
// where bgjob decides what became of a job:
//
//   - meta.json missing, too large, unreadable, not of this directory, or an
//     exit_code that is no status: "unreadable" (Error says which);
//   - exit_code exists: the job ended with that status; "not_run" when the
//     wrapper recorded that its command never ran (a job of --after-ok
//     whose job did not exit 0), "killed" when a stop marker exists and
//     the status is 128+N, else "exited";
//   - no exit_code, same boot, and the recorded pid is alive with the
//     recorded start time: "running", or "queued" while the wrapper waits
//     for the job's turn (the queued file);
//   - otherwise "lost": the wrapper died without recording a status (it
//     was SIGKILLed, "vanished", or the host rebooted, "reboot"), and the
//     exit status is unknown.
//
// Whatever the status, LiveProcesses counts the job's processes still
// alive besides its wrapper: a job that has ended can leave some behind.
func Derive(o Observation, host string) Job {
	j := Job{Host: host}
	j.Paths(o.Dir)
	j.ID = path.Base(o.Dir)
	// The directory names the workspace too: an unreadable job says
	// where it is; a readable one's meta.json says the same.
	j.Workspace = path.Base(path.Dir(o.Dir))
	// Processes are counted whatever the job's files say: those of an
	// unreadable job carry its id too.
	j.LiveProcesses, j.ProcessScan = liveProcesses(o)
	j.Ports = o.Ports
	m, problem := readMeta(o, j.ID)
	if problem != "" {
		j.Status, j.Error = StatusUnreadable, problem
		return j
	}
	j.Meta = m
	if m.QueuedAt != nil {
		// A job that waited for its turn started when its command did:
		// started_at says when, and until then it has not started.
		j.StartedAt = time.Time{}
		if t, err := DecodeEndedAt(o.StartedAt); err == nil {
			j.StartedAt = t
		}
	}
	j.StdoutDropped = DecodeDropped(o.StdoutDropped)
	j.StderrDropped = DecodeDropped(o.StderrDropped)
	j.LogsFull = o.LogsFull
	// Most jobs have none: no parse, and no error made, for them.
	if o.ReadyAt != "" {
		if t, err := DecodeReadyAt(o.ReadyAt); err == nil {
			j.ReadyAt = &t
		}
	}
	if o.HasExit {
		j.statusFromExit(o)
		return j
	}
	j.statusFromWrapper(o)
	return j
}

// liveProcesses returns Job.LiveProcesses and Job.ProcessScan of o.
func liveProcesses(o Observation) (n int, scan string) {
	if c, err := strconv.Atoi(o.LiveProcesses); err == nil && c > 0 {
		n = c
	}
	switch {
	case o.LiveProcesses == "":
		scan = ScanNone
	case o.ProcessScan != "" && o.ProcessScan != ScanProc:
		scan = o.ProcessScan
	}
	return n, scan
}

// readMeta returns the meta.json of o, the job directory of job id, or
// why the job is unreadable: a meta.json missing, too large, empty,
// unreadable, or of another directory.
func readMeta(o Observation, id string) (m Meta, problem string) {
	switch {
	case !o.HasMeta:
		return Meta{}, "meta.json is missing"
	case o.MetaTooLarge:
		return Meta{}, fmt.Sprintf("meta.json: larger than %d bytes (%d MiB), not read", MaxMetaSize, MaxMetaSize>>20)
	case o.Meta == "":
		// What a script reads of one it may not read, or of an empty one.
		return Meta{}, "meta.json is empty or cannot be read"
	}
	m, err := decodeMetaLine(o.Meta)
	if err != nil {
		return Meta{}, fmt.Sprintf("meta.json: %v", err)
	}
	if m.ID != id {
		return Meta{}, fmt.Sprintf("meta.json: id %q does not match directory", m.ID)
	}
	return m, ""
}

// statusFromExit sets the status of a job whose exit_code exists: exited
// with that status, not_run when its command never ran, killed by a
// stop's signal; unreadable when exit_code holds no status.
func (j *Job) statusFromExit(o Observation) {
	code, err := DecodeExitCode(o.ExitCode)
	if err != nil {
		j.Status = StatusUnreadable
		j.Error = err.Error()
		return
	}
	j.ExitCode = &code
	j.Status = StatusExited
	if t, err := DecodeEndedAt(o.EndedAt); err == nil {
		j.EndedAt = &t
	}
	if o.NotRun != "" {
		// The command never ran: the status the wrapper recorded
		// is not one.
		j.ExitCode = nil
		j.Status, j.Reason, j.Error = StatusNotRun, "after_ok", o.NotRun
		if strings.HasPrefix(o.NotRun, "ulimit ") {
			// The wrapper could not set a limit of run --ulimit.
			j.Reason = "ulimit"
		}
		return
	}
	if reason, sig, ok := DecodeStop(o.Stop); ok {
		// Stopped: killed by the stop's signal, or (a program that
		// ends itself on TERM, an interactive shell whose terminal
		// went) exited on its own, its reason said all the same.
		j.Reason = reason
		if code > 128 {
			j.Status, j.Signal = StatusKilled, sig
		}
		return
	}
	j.Reason = limitReason(code, j.Ulimits)
}

// Exit statuses of a command killed by the signals of its resource
// limits: SIGXCPU (24) and SIGXFSZ (25), and SIGKILL, which the kernel
// sends at a hard CPU limit.
const (
	exitXCPU = 128 + 24
	exitXFSZ = 128 + 25
	exitKILL = 128 + 9
)

// limitReason is the reason of a job that ended with status code, not
// stopped: "cpu_limit" or "fsize_limit" when a resource limit's signal
// killed it (KILL counts for a job with a CPU limit, which the kernel
// kills so at the hard limit), else "".
func limitReason(code int, limits []Ulimit) string {
	switch code {
	case exitXCPU:
		return "cpu_limit"
	case exitXFSZ:
		return "fsize_limit"
	case exitKILL:
		for _, u := range limits {
			if u.Name == "cpu" && u.Hard != Unlimited {
				return "cpu_limit"
			}
		}
	}
	return ""
}

// statusFromWrapper sets the status of a job without an exit_code from its
// wrapper: running (or queued) while the process meta.json records lives
// on the same boot, lost otherwise.
func (j *Job) statusFromWrapper(o Observation) {
	switch {
	case j.BootID != "" && o.BootID != "" && j.BootID != o.BootID:
		j.Status = StatusLost
		j.Reason = "reboot"
	case o.ProcStart != "" && sameStart(o.ProcStart, j.ProcStart):
		j.Status = StatusRunning
		if o.Queued != "" {
			j.Status, j.Queued = StatusQueued, o.Queued
		}
	default:
		j.Status = StatusLost
		j.Reason = "vanished"
	}
}

// sameStart reports whether two start times of a process are the same:
// clock ticks, or where the host has no /proc the words of ps's lstart,
// however many spaces are between them ("Tue Dec  1 10:31:40 2026").
func sameStart(a, b string) bool {
	if a == b {
		return true
	}
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// Duration returns how long j's command ran: until it ended, or until now
// while it runs. An ended job is measured by its host's clock, from the
// wrapper's start (HostStartedAt) to ended_at, where meta.json has the
// start; otherwise, and while it runs, from started_at, the clock of the
// machine that ran bgjob, or, for a job that waited for its turn
// (QueuedAt), the host's when its command started. It reports false when
// that is unknown (no start: a job still queued, or never run; an ended
// job without an end time).
func (j Job) Duration(now time.Time) (time.Duration, bool) {
	switch {
	case j.StartedAt.IsZero():
		return 0, false
	case j.Status == StatusRunning:
		return max(now.Sub(j.StartedAt), 0), true
	case j.EndedAt != nil && j.HostStartedAt != nil && j.QueuedAt == nil:
		return max(j.EndedAt.Sub(*j.HostStartedAt), 0), true
	case j.EndedAt != nil:
		return max(j.EndedAt.Sub(j.StartedAt), 0), true
	}
	return 0, false
}
