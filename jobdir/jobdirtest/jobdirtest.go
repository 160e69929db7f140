//go:build !windows

// Package jobdirtest fabricates job directories in bgjob's on-disk format
// (docs/format.md) for tests and benchmarks: a job that exited, was killed,
// is running (with a real process), or was lost, with its logs, stop
// marker, dropped counts and name index. Every file is encoded by package
// jobdir, so a fabricated job is byte for byte one that bgjob could have
// left behind, and it is the only place outside the scripts that writes
// job files.
//
// Tests call Make; programs and benchmarks that fabricate many jobs use a
// Maker, which reads the host's boot id once.
package jobdirtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// State is what a fabricated job's files say became of it.
type State int

// The states Make fabricates, and the status jobdir.Derive gives each.
const (
	// Exited: exit_code (Job.ExitCode) and ended_at exist. Status exited.
	Exited State = iota
	// Killed: like Exited, with a stop marker and an exit status above
	// 128 (143 unless Job.ExitCode says otherwise). Status killed.
	Killed
	// Running: no exit_code; meta.json records a live process (Meta.PID,
	// or one Make starts) with its real start time, on this boot. Status
	// running.
	Running
	// Vanished: no exit_code; meta.json records a pid that no process has
	// now, or, when Meta.PID is given and alive, another start time. Status
	// lost, reason vanished.
	Vanished
	// Rebooted: no exit_code; meta.json records another boot id. Status
	// lost, reason reboot.
	Rebooted
	// Creating: the job directory alone, as the launcher has just made it:
	// no meta.json, so readers do not list it.
	Creating
)

// Job describes a job directory to fabricate. Zero fields get defaults.
type Job struct {
	// Meta is meta.json. Defaults: Version jobdir.Version, ID a fresh one
	// from StartedAt (now, to the millisecond), Workspace the workspace
	// given to Make, Command "true", Env empty; PID, PGID, ProcStart and
	// BootID as the State needs.
	Meta  jobdir.Meta
	State State
	// ExitCode is the status in exit_code (Exited and Killed).
	ExitCode int
	// EndedAt is the time in ended_at (default: a second after the start).
	EndedAt time.Time
	// Reason and Signal are the stop marker of a Killed job (default
	// "stop" and "TERM").
	Reason, Signal string
	// Stdout and Stderr are the logs.
	Stdout, Stderr string
	// StdoutDropped and StderrDropped, when not 0, are written to
	// STREAM.dropped as the --max-log-size capper does.
	StdoutDropped, StderrDropped int64
	// ReadyAt, when not zero, is written to ready_at as run --ready's
	// ready script does.
	ReadyAt time.Time
	// Script is job.sh (default: a comment saying the job is fabricated).
	Script string
	// MetaSize, when larger than meta.json would be, pads meta.json to
	// that many bytes with a field readers ignore (x_pad, first), as no
	// bgjob writes it: meta.json of that size, for tests of the size bound.
	MetaSize int
}

// Maker fabricates job directories under one root. It is cheap per job:
// it reads the host's boot id once and hands out pids no process has
// from a cursor.
type Maker struct {
	root    string
	boot    string
	nextPID int
	ready   map[string]bool // workspaces created
}

// NewMaker returns a Maker for root, which it creates (mode 0700) when
// needed.
func NewMaker(root string) (*Maker, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return nil, err
	}
	return &Maker{root: root, boot: BootID(), nextPID: 1 << 22, ready: map[string]bool{}}, nil
}

// BootID returns the host's boot id, "" where there is none.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ProcStart returns the start time of process pid as meta.json records it:
// field 22 of /proc/PID/stat.
func ProcStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return "", fmt.Errorf("short /proc/%d/stat: %q", pid, s)
	}
	return f[19], nil
}

// freePID returns a pid that no process has, as the pids of ended jobs
// usually are: a live one would make readers look at that process. It
// is above Linux's limit on pids (2^22, PID_MAX_LIMIT), so no process
// can take it while a test runs: a pid free only at the time it was
// chosen was taken, under load, between a look made in Go and the
// script's.
func (mk *Maker) freePID() int {
	mk.nextPID++
	return mk.nextPID
}

// otherBoot returns a boot id that is not the host's.
func (mk *Maker) otherBoot() string {
	if b := "00000000-1111-2222-3333-444444444444"; b != mk.boot {
		return b
	}
	return "ffffffff-1111-2222-3333-444444444444"
}

// Make fabricates j in workspace ws and returns its meta.json and
// directory. A Running job needs j.Meta.PID: the package-level Make starts
// a process when it is 0.
func (mk *Maker) Make(ws string, j Job) (jobdir.Meta, string, error) {
	m, err := mk.meta(ws, j)
	if err != nil {
		return m, "", err
	}
	wsDir := filepath.Join(mk.root, ws)
	if !mk.ready[ws] {
		if err := os.MkdirAll(filepath.Join(wsDir, jobdir.NamesDir), 0o700); err != nil {
			return m, "", err
		}
		mk.ready[ws] = true
	}
	dir := filepath.Join(wsDir, m.ID)
	for err := os.Mkdir(dir, 0o700); err != nil; err = os.Mkdir(dir, 0o700) {
		if !os.IsExist(err) || j.Meta.ID != "" {
			return m, "", err
		}
		m.ID = jobdir.NewID(m.StartedAt) // a fresh id, as the launcher retries
		dir = filepath.Join(wsDir, m.ID)
	}
	if j.State == Creating {
		// Last changed when the launch made it, at its start.
		return m, dir, os.Chtimes(dir, m.StartedAt, m.StartedAt)
	}
	files, err := mk.files(m, j)
	if err != nil {
		return m, dir, err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.content, 0o600); err != nil {
			return m, dir, err
		}
	}
	if m.Name != "" {
		if err := os.WriteFile(filepath.Join(wsDir, jobdir.NamesDir, m.Name), jobdir.EncodeNameIndex(m.ID), 0o600); err != nil {
			return m, dir, err
		}
	}
	return m, dir, nil
}

// meta fills in the defaults of j.Meta.
func (mk *Maker) meta(ws string, j Job) (jobdir.Meta, error) {
	m := withDefaults(j.Meta, ws)
	if j.State == Running && m.PID == 0 {
		return m, errors.New("jobdirtest: a running job needs the pid of a live process")
	}
	given := m.PID != 0
	if !given {
		m.PID = mk.freePID()
	}
	if m.PGID == 0 {
		m.PGID = m.PID
	}
	if m.ProcStart == "" {
		start, err := procStartFor(m.PID, j.State, given)
		if err != nil {
			return m, err
		}
		m.ProcStart = start
	}
	if m.BootID == "" {
		m.BootID = mk.boot
		if j.State == Rebooted {
			m.BootID = mk.otherBoot()
		}
	}
	return m, nil
}

// withDefaults fills in the fields of m that do not depend on the job's
// state: the version, the start (now, to the millisecond), the id, the
// workspace ws, the command and the environment.
func withDefaults(m jobdir.Meta, ws string) jobdir.Meta {
	if m.Version == 0 {
		m.Version = jobdir.Version
	}
	if m.StartedAt.IsZero() {
		m.StartedAt = time.Now()
	}
	m.StartedAt = m.StartedAt.UTC().Truncate(time.Millisecond)
	if m.ID == "" {
		m.ID = jobdir.NewID(m.StartedAt)
	}
	if m.Workspace == "" {
		m.Workspace = ws
	}
	if m.Command == "" && len(m.Argv) == 0 {
		m.Command = "true"
	}
	if m.Env == nil {
		m.Env = []string{}
	}
	return m
}

// procStartFor returns the start time meta.json records for process pid
// of a job in state: its real one, another for a Vanished job, and an
// arbitrary one when no such process exists. That is an error for a
// Running job, and for a Rebooted one whose pid was given (given).
func procStartFor(pid int, state State, given bool) (string, error) {
	real, err := ProcStart(pid)
	switch {
	case err != nil && (state == Running || state == Rebooted && given):
		return "", fmt.Errorf("jobdirtest: process %d: %w", pid, err)
	case err != nil:
		return "1000", nil
	case state == Vanished:
		n, _ := strconv.ParseUint(real, 10, 64)
		return strconv.FormatUint(n+12345, 10), nil
	}
	return real, nil
}

type file struct {
	name    string
	content []byte
}

// files returns the files of a fabricated job in the order its writers
// would leave them, meta.json last, so a reader never lists it half made.
func (mk *Maker) files(m jobdir.Meta, j Job) ([]file, error) {
	script := j.Script
	if script == "" {
		script = "# bgjob wrapper (fabricated by jobdirtest)\n"
	}
	fs := []file{
		{jobdir.ScriptFile, []byte(script)},
		{jobdir.StdoutFile, []byte(j.Stdout)},
		{jobdir.StderrFile, []byte(j.Stderr)},
	}
	if j.StdoutDropped != 0 {
		fs = append(fs, file{"stdout" + jobdir.DroppedSuffix, jobdir.EncodeDropped(j.StdoutDropped)})
	}
	if j.StderrDropped != 0 {
		fs = append(fs, file{"stderr" + jobdir.DroppedSuffix, jobdir.EncodeDropped(j.StderrDropped)})
	}
	if !j.ReadyAt.IsZero() {
		fs = append(fs, file{jobdir.ReadyFile, jobdir.EncodeReadyAt(j.ReadyAt)})
	}
	if j.State != Killed {
		// The launcher's blank stop record, which a stop would have
		// renamed to stop (docs/format.md).
		fs = append(fs, file{jobdir.StopFile + ".tmp", []byte(strings.Repeat(" ", 31) + "\n")})
	}
	switch j.State {
	case Killed:
		code := j.ExitCode
		if code == 0 {
			code = 143
		}
		if code <= 128 {
			return nil, fmt.Errorf("jobdirtest: a killed job's exit status is above 128, not %d", code)
		}
		reason, sig := j.Reason, j.Signal
		if reason == "" {
			reason = "stop"
		}
		if sig == "" {
			sig = "TERM"
		}
		fs = append(fs, file{jobdir.StopFile, jobdir.EncodeStop(reason, sig)})
		fs = append(fs, ended(m, j, code)...)
	case Exited:
		fs = append(fs, ended(m, j, j.ExitCode)...)
	}
	meta, err := jobdir.EncodeMeta(m)
	if err != nil {
		return nil, err
	}
	if pad := j.MetaSize - len(meta) - len(`"x_pad":"",`); pad > 0 {
		meta = append([]byte(`{"x_pad":"`+strings.Repeat("x", pad)+`",`), meta[1:]...)
	}
	return append(fs, file{jobdir.MetaFile, meta}), nil
}

// ended returns ended_at and exit_code, in the order the wrapper writes
// them.
func ended(m jobdir.Meta, j Job, code int) []file {
	at := j.EndedAt
	if at.IsZero() {
		at = m.StartedAt.Add(time.Second)
	}
	return []file{
		{jobdir.EndedFile, jobdir.EncodeEndedAt(at)},
		{jobdir.ExitCodeFile, jobdir.EncodeExitCode(code)},
	}
}

// Dir is a job directory that Make fabricated.
type Dir struct {
	// Path is the job directory.
	Path string
	// Meta is what its meta.json holds.
	Meta jobdir.Meta
	// Process is the process Make started to stand for a Running job's
	// wrapper (nil otherwise). It leads its own process group and is
	// killed when the test ends.
	Process *os.Process

	wait func()
}

// Make fabricates j in root/ws for a test and fails the test on error. For
// a Running job without a pid it starts a process (sleep, leading its own
// process group, as a wrapper does) and kills it when the test ends.
func Make(t testing.TB, root, ws string, j Job) *Dir {
	t.Helper()
	mk, err := NewMaker(root)
	if err != nil {
		t.Fatal(err)
	}
	d := &Dir{wait: func() {}}
	if j.State == Running && j.Meta.PID == 0 {
		cmd := exec.Command("sleep", "3600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		d.Process = cmd.Process
		d.wait = func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) }
		t.Cleanup(d.wait)
		j.Meta.PID = cmd.Process.Pid
	}
	d.Meta, d.Path, err = mk.Make(ws, j)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// End ends a Running job as its wrapper would: it kills the process Make
// started, if any, then writes ended_at and exit_code (atomically).
func (d *Dir) End(t testing.TB, code int) {
	t.Helper()
	d.wait()
	for _, f := range ended(d.Meta, Job{EndedAt: time.Now()}, code) {
		tmp := filepath.Join(d.Path, f.name+".tmp")
		if err := os.WriteFile(tmp, f.content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(d.Path, f.name)); err != nil {
			t.Fatal(err)
		}
	}
}
