package shellgen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// Target says where jobs live on a host.
type Target struct {
	// Root is the absolute root directory; "" means the host's default,
	// /tmp/bgjob-$UID of the user running the script.
	Root string
	// Workspace is the workspace, already validated.
	Workspace string
}

func (t Target) check() error {
	if t.Root != "" && (!strings.HasPrefix(t.Root, "/") || strings.ContainsAny(t.Root, "\x00\n")) {
		return fmt.Errorf("root %q must be an absolute path without NUL or newline", t.Root)
	}
	if t.Workspace == "" {
		return nil
	}
	return jobdir.ValidateName("workspace", t.Workspace)
}

// config returns the configuration every script starts with: the root,
// the workspace (see begin.sh) and the most bytes of meta.json a reader
// reads (bg_metaline).
func (t Target) config() (*config, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	c := new(config)
	c.set("bg_root", t.Root)
	c.set("bg_workspace", t.Workspace)
	c.setInt("bg_metamax", jobdir.MaxMetaSize)
	return c, nil
}

// script returns the script of the verb file verb: the target's
// configuration, then what set adds to it, then begin.sh and the file.
func (t Target) script(verb string, set func(*config)) (string, error) {
	return text(t.look(verb, nil, set))
}

// Request is one request to a host: its script, whose configuration is
// checked and whose text is made only when asked for (Text), and what it
// asks (Params). A runtime that can answer a request itself on its host,
// printing what the script would print (bgjob.Answerer: runtime/local,
// in Go), reads Params and runs no script; the first text a process makes
// parses the whole library (sh/lib), which costs a short verb's process a
// third of a millisecond and 300 KB of new heap.
type Request struct {
	target Target
	params any
	files  LaunchFiles
	text   func() string
}

// Text returns the script's text, made at the first call.
func (r Request) Text() string { return r.text() }

// Target returns where the request's jobs live.
func (r Request) Target() Target { return r.target }

// Params returns what the request asks, as its constructor was given it,
// with its defaults filled in: a Status (StatusRequest), Wait
// (WaitRequest), List (ListRequest), Logs (LogsRequest) or Launch
// (LaunchRequest).
func (r Request) Params() any { return r.params }

// Files returns the files a launch request writes into the job's
// directory, checked when the request was made (LaunchRequest); the zero
// LaunchFiles for another request.
func (r Request) Files() LaunchFiles { return r.files }

// look is script, its text made when asked for, asking params.
func (t Target) look(verb string, params any, set func(*config)) (Request, error) {
	c, err := t.config()
	if err != nil {
		return Request{}, err
	}
	if set != nil {
		set(c)
	}
	if c.err != nil {
		return Request{}, c.err
	}
	return Request{target: t, params: params, text: sync.OnceValue(func() string {
		s, err := assemble(c, "begin.sh", verb, "end.sh")
		if err != nil {
			// c.err, checked above, is the only error assemble returns.
			panic("shellgen: " + err.Error())
		}
		return s
	})}, nil
}

// text is the text of r, for the verbs that run their script at once.
func text(r Request, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

// refs validates job references and returns them as one word list.
func refs(rs []string) (string, error) {
	for _, r := range rs {
		if err := jobdir.ValidateName("job", r); err != nil {
			return "", err
		}
	}
	return strings.Join(rs, " "), nil
}

// refScript is script for a verb that takes job references, set as bg_refs.
func (t Target) refScript(verb string, rs []string, set func(*config)) (string, error) {
	return text(t.refLook(verb, rs, nil, set))
}

// refLook is refScript, its text made when asked for, asking params.
func (t Target) refLook(verb string, rs []string, params any, set func(*config)) (Request, error) {
	list, err := refs(rs)
	if err != nil {
		return Request{}, err
	}
	return t.look(verb, params, func(c *config) {
		c.set("bg_refs", list)
		if set != nil {
			set(c)
		}
	})
}

// Launch describes a job to start.
type Launch struct {
	Target
	// Meta describes the job; its process fields are filled in on the host.
	// Its Stdin gives the command a FIFO in the job directory, stdin, as
	// its standard input (see SendScript) instead of /dev/null; MaxLogSize,
	// when positive, keeps at most about this many bytes of each log on
	// disk, the newest (see drain.sh); PTY runs the command on a
	// pseudo-terminal of PTYCols columns by PTYRows rows whose master
	// util-linux script(1) holds on the host (see pty.sh; it needs Stdin):
	// the launch fails, with an ErrKindNoPTY record and no job (and before
	// a Replace stops anything), on a host whose script cannot. Its Timeout
	// is the text meta.json shows; Timeout below is what the timer uses.
	Meta jobdir.Meta
	// Env holds the variables to set, as NAME=VALUE.
	Env []string
	// Timeout stops the job after this long (0: never), TERM then KILL
	// after Grace.
	Timeout time.Duration
	Grace   time.Duration
	// Prune, unless nil, starts run's pruning pass after the launch: a
	// bounded, detached pass over the workspace that removes jobs by the
	// rule of PruneScript (see bg_autoprune in sh/lib/prune.sh).
	Prune *Prune
	// LineBuffered runs the command under "stdbuf -oL -eL" where the host
	// has it, with PYTHONUNBUFFERED=1, so output reaches the logs line by
	// line; meta.json's buffering field records what was applied.
	LineBuffered bool
	// Replace, for a named job, first stops every job of the workspace
	// with that name and live processes (TERM, KILL after Grace) and waits
	// until their processes are gone; each is reported after an H replaced
	// record (launch_replace.sh). Without it, the newest job of the name
	// is reported after an H held record when it runs (launch_name.sh).
	Replace bool
	// Cgroup asks for a cgroup of the job's own (run --memory, --cpus),
	// which bgjob makes on no host yet: the launch fails with an
	// ErrKindNoCgroup record saying what the host has, and no job
	// (launch_cgroup.sh).
	Cgroup bool
}

// ValidEnvName reports whether s can be a shell variable name.
func ValidEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}

// LaunchScript returns the script that creates the job directory, writes
// meta.json and the wrapper, and starts the wrapper in a new session. It
// prints the job's observation.
func LaunchScript(l Launch) (string, error) {
	return text(LaunchRequest(l))
}

// LaunchRequest is LaunchScript, its text made when asked for; its
// files (Request.Files) are made and checked at once.
func LaunchRequest(l Launch) (Request, error) {
	m := l.Meta
	f, err := l.Files()
	if err != nil {
		return Request{}, err
	}
	c, err := l.Target.config()
	if err != nil {
		return Request{}, err
	}
	files := []string{"begin.sh"}
	if l.Cgroup {
		files = append(files, "launch_cgroup.sh")
	}
	if m.PTY {
		// Its checks run at once, before launch.sh calls bg_samename:
		// a host that cannot refuses before a replace stops a job.
		files = append(files, "launch_pty.sh")
	}
	if m.MaxLogSize > 0 {
		// Likewise for the log cap (launch_cap.sh).
		files = append(files, "launch_cap.sh")
	}
	switch {
	case l.Replace:
		files = append(files, "launch_replace.sh")
		c.setInt("bg_rgrace", millis(l.Grace))
	case m.Name != "":
		files = append(files, "launch_name.sh")
	}
	files = append(files, "launch.sh")
	if p := l.Prune; p != nil {
		if err := p.Check(); err != nil {
			return Request{}, err
		}
		p.set(c)
		files = append(files, "launch_prune.sh")
	}
	c.setInt("bg_keepumask", 1)
	c.set("bg_id", m.ID)
	c.set("bg_name", m.Name)
	c.set("bg_cwd", m.Cwd)
	c.setBool("bg_stdin", m.Stdin)
	c.setBool("bg_pty", m.PTY)
	// What the host adds to meta.json (its ids, the process's start, the
	// umask, the buffering) is far under 4 KiB.
	c.setBool("bg_metasmall", len(f.MetaPrefix) <= 4096)
	c.set("bg_wrapper", f.Wrapper)
	c.set("bg_script", strings.TrimSuffix(f.Command, "\n"))
	files = append(files, "end.sh")
	if c.err != nil {
		return Request{}, c.err
	}
	return Request{target: l.Target, params: l, files: f, text: sync.OnceValue(func() string {
		s, err := assemble(c, files...)
		if err != nil {
			// c.err, checked above, is the only error assemble returns.
			panic("shellgen: " + err.Error())
		}
		return s
	})}, nil
}

// LaunchFiles is what a launch writes into the new job directory before
// it starts the wrapper (launch.sh; a launch made in Go writes the same).
type LaunchFiles struct {
	// Wrapper is job.sh's text (WrapperScript).
	Wrapper string
	// Command is command.sh's text, "" for none: a script command too long
	// for one argument, with a newline, which the wrapper runs from there.
	Command string
	// MetaPrefix is the start of meta.json (jobdir.EncodeMetaPrefix of
	// l.Meta), which the wrapper completes with the host's fields, or a
	// launch made in Go completes for it.
	MetaPrefix []byte
}

// Files checks l as LaunchScript does and returns the files its launch
// writes into the job directory.
func (l Launch) Files() (LaunchFiles, error) {
	m := l.Meta
	if err := jobdir.ValidateName("job id", m.ID); err != nil {
		return LaunchFiles{}, err
	}
	if m.Name != "" {
		if err := jobdir.ValidateJobName(m.Name); err != nil {
			return LaunchFiles{}, err
		}
	}
	prefix, err := jobdir.EncodeMetaPrefix(m)
	if err != nil {
		return LaunchFiles{}, err
	}
	wrapper, err := wrapperScript(l, prefix)
	if err != nil {
		return LaunchFiles{}, err
	}
	if err := l.Target.check(); err != nil {
		return LaunchFiles{}, err
	}
	if l.Replace && m.Name == "" {
		return LaunchFiles{}, fmt.Errorf("replace needs a job name")
	}
	f := LaunchFiles{Wrapper: wrapper, MetaPrefix: prefix}
	if commandFile(m) {
		f.Command = m.Command + "\n"
	}
	return f, nil
}

// WrapperScript returns job.sh, the wrapper that runs the command as its
// child and records the child's real status: the text LaunchScript writes
// into the job directory.
func WrapperScript(l Launch) (string, error) {
	prefix, err := jobdir.EncodeMetaPrefix(l.Meta)
	if err != nil {
		return "", err
	}
	return wrapperScript(l, prefix)
}

// wrapperScript is WrapperScript with meta.json's prefix encoded.
func wrapperScript(l Launch, prefix []byte) (string, error) {
	m := l.Meta
	c := new(config)
	c.b.WriteString("# bgjob wrapper for job " + m.ID + " (generated from shellgen/sh/wrapper.sh; see docs/design.md)\n")
	c.set("bg_id", m.ID)
	c.set("bg_meta", string(prefix))
	c.set("bg_metafmt", "%s"+jobdir.MetaHostFormat)
	if err := setCommand(c, m); err != nil {
		return "", err
	}
	if err := setEnv(c, l.Env); err != nil {
		return "", err
	}
	c.set("bg_cwd", m.Cwd)
	c.setBool("bg_stdin", m.Stdin)
	c.setBool("bg_lb", l.LineBuffered)
	if l.LineBuffered {
		// meta.json's buffering field, with stdbuf(1) on the host and without.
		c.set("bg_bufs", jobdir.HostField("buffering", jobdir.BufferingStdbuf))
		c.set("bg_bufn", jobdir.HostField("buffering", jobdir.BufferingNoStdbuf))
	}
	if err := setPTY(c, m); err != nil {
		return "", err
	}
	// The descriptor the command's stderr goes to (wrapper.sh: 5 leads to
	// stdout.log, 6 to stderr.log; run --merge: stdout's).
	efd := int64(6)
	if m.Merge {
		efd = 5
	}
	c.setInt("bg_efd", efd)
	timeout := ""
	if l.Timeout > 0 {
		timeout = strconv.FormatInt(millis(l.Timeout), 10)
	}
	c.set("bg_timeout", timeout)
	c.setInt("bg_grace", millis(l.Grace))
	c.setInt("bg_cap", max(m.MaxLogSize, 0))
	if err := setTurn(c, m); err != nil {
		return "", err
	}
	if err := setUlimits(c, m.Ulimits); err != nil {
		return "", err
	}
	var files []string
	if l.Timeout > 0 {
		files = append(files, "timer.sh")
	}
	if m.MaxLogSize > 0 {
		files = append(files, "drain.sh")
	}
	if m.PTY {
		files = append(files, "pty.sh")
	}
	return assembleHead(c, "wrapper_init.sh", append(files, "wrapper.sh")...)
}

// setCommand sets the wrapper's command: the words of an argv, or a
// script run by the job's shell, given inline or in command.sh.
func setCommand(c *config, m jobdir.Meta) error {
	if len(m.Argv) > 0 {
		// The words quoted as one list, which bg_command lays out with
		// one eval: a time linear in their number.
		for i, a := range m.Argv {
			if len(a) > MaxArg {
				return fmt.Errorf("word %d of the command is %d bytes, %w; pass it in a file", i+1, len(a), ErrTooLong)
			}
		}
		q, err := QuoteArgv(m.Argv)
		if err != nil {
			return fmt.Errorf("command: %w", err)
		}
		c.setInt("bg_argc", int64(len(m.Argv)))
		c.set("bg_cmd", q)
	} else {
		c.setInt("bg_argc", 0)
		if commandFile(m) {
			// In command.sh, which the launcher writes.
			c.set("bg_cmd", "")
		} else {
			c.set("bg_cmd", m.Command)
		}
	}
	c.set("bg_sh", m.Shell)
	c.setBool("bg_cmdfile", commandFile(m))
	return nil
}

// setEnv sets the --env entries the wrapper exports, each a NAME=VALUE
// that a program can receive.
func setEnv(c *config, env []string) error {
	c.setInt("bg_envc", int64(len(env)))
	for i, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !ValidEnvName(name) {
			return fmt.Errorf("invalid environment variable %q: want NAME=VALUE with NAME a shell name", kv)
		}
		if len(kv) > MaxArg {
			return fmt.Errorf("environment variable %s is %d bytes as NAME=VALUE, %w; pass the value in a file", name, len(kv), ErrTooLong)
		}
		c.set("bg_env"+strconv.Itoa(i+1), kv)
	}
	return nil
}

// setPTY sets whether the command runs on a PTY, and its size: a PTY job
// needs stdin and a positive size.
func setPTY(c *config, m jobdir.Meta) error {
	c.setBool("bg_pty", m.PTY)
	if !m.PTY {
		return nil
	}
	if !m.Stdin || m.PTYCols <= 0 || m.PTYRows <= 0 {
		return fmt.Errorf("a PTY job needs stdin and a positive size, got %dx%d", m.PTYCols, m.PTYRows)
	}
	c.setInt("bg_cols", int64(m.PTYCols))
	c.setInt("bg_rows", int64(m.PTYRows))
	return nil
}

// setTurn sets what the wrapper waits for before it runs the command: a
// slot in the host's queue, the end of the jobs of After and AfterOK
// (which must be job ids).
func setTurn(c *config, m jobdir.Meta) error {
	for _, id := range append(slices.Clone(m.After), m.AfterOK...) {
		if !jobdir.IsID(id) {
			return fmt.Errorf("after: %q is not a job id", id)
		}
	}
	c.setInt("bg_slots", int64(max(m.Slots, 0)))
	c.set("bg_after", strings.Join(m.After, " "))
	c.set("bg_afterok", strings.Join(m.AfterOK, " "))
	return nil
}

// ulimitOptions are the ulimit options of jobdir.UlimitNames and the
// bytes of the unit each takes its values in (1: as the kernel has them):
// POSIX sh's, and dash's, busybox's and bash's as sh (bash in POSIX mode
// counts -c and -f in 512-byte blocks too). dash has no -u: the script
// falls back to its -p (bg_ulimits).
var ulimitOptions = map[string]struct {
	option string
	unit   int64
}{
	"as": {"v", 1024}, "core": {"c", 512}, "cpu": {"t", 1}, "fsize": {"f", 512},
	"memlock": {"l", 1024}, "nofile": {"n", 1}, "nproc": {"u", 1}, "stack": {"s", 1024},
}

// setUlimits sets bg_ul, the limits bg_command sets (bg_ulimits): for
// each, NAME=SOFT:HARD, the ulimit option and the two values in its unit
// (a byte count rounded down to it), or "unlimited".
func setUlimits(c *config, limits []jobdir.Ulimit) error {
	words := make([]string, 0, 4*len(limits))
	for _, u := range limits {
		o, ok := ulimitOptions[u.Name]
		if err := u.Validate(); err != nil || !ok {
			return fmt.Errorf("ulimit %s: %w", u.Name, cmp.Or(err, jobdir.ErrBadUlimit))
		}
		value := func(n int64) string {
			if n == jobdir.Unlimited {
				return "unlimited"
			}
			return strconv.FormatInt(n/o.unit, 10)
		}
		words = append(words, u.String(), o.option, value(u.Soft), value(u.Hard))
	}
	c.set("bg_ul", strings.Join(words, " "))
	return nil
}

// MaxArg is the longest string a program can receive as one argument or
// one NAME=VALUE of its environment: Linux's limit on one string of an
// exec (MAX_ARG_STRLEN, 128 KiB with its NUL). A longer word of an argv
// or --env entry cannot reach the command and is refused; a longer script
// command runs from a file (commandFile).
const MaxArg = 128<<10 - 1

// ErrTooLong is returned for a word of an argv or an --env entry longer
// than MaxArg.
var ErrTooLong = fmt.Errorf("over the %d bytes a program can receive in one argument or environment entry (the kernel's limit on one string, 128 KiB)", MaxArg)

// commandFile reports whether the job's command is a script too long to
// pass as the argument of "sh -c": the launcher writes it to command.sh
// in the job directory, and the command runs as "sh command.sh" ($0
// names that file).
func commandFile(m jobdir.Meta) bool {
	return len(m.Argv) == 0 && len(m.Command) > MaxArg
}

// millis returns d in milliseconds, rounded up; 0 for d <= 0. Every
// duration a script takes is in milliseconds (see sh/lib/time.sh).
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// StatusScript returns the script that prints the observation of each job
// named in refs (by id or name), or an E notfound record.
func StatusScript(t Target, rs []string) (string, error) {
	return text(StatusRequest(t, rs))
}

// Status is what a status request asks: the jobs Refs names, and with
// Ports the TCP ports their live processes listen on (p records after
// each job's L record, bg_ports).
type Status struct {
	Refs  []string
	Ports bool
	// SkipRunningCount leaves out the count of the processes of a job
	// whose wrapper runs, as List's, for a look that does not show it.
	SkipRunningCount bool
}

// StatusRequest is StatusScript, its text made when asked for.
func StatusRequest(t Target, rs []string) (Request, error) {
	return StatusOf(t, Status{Refs: rs})
}

// StatusOf is StatusRequest asking what s asks.
func StatusOf(t Target, s Status) (Request, error) {
	return t.refLook("status.sh", s.Refs, s, func(c *config) {
		c.setBool("bg_withports", s.Ports)
		if s.SkipRunningCount {
			c.setBool("bg_countrun", false)
		}
	})
}

// List selects jobs for ListScript.
type List struct {
	// AllWorkspaces lists every workspace under the root.
	AllWorkspaces bool
	// Before lists only jobs whose id sorts before it (a paging cursor).
	Before string
	// Max stops after this many jobs (0: all).
	Max int
	// Owned lists only the jobs whose meta.json records an owner.
	Owned bool
	// SkipRunningCount leaves out the count of the processes of a job
	// whose wrapper runs (running or queued: no L record), for a list that
	// does not show it; an ended job's, which tells of processes left
	// running, stays.
	SkipRunningCount bool
	// Ports adds to each job counted the TCP ports its live processes
	// listen on (p records, bg_ports).
	Ports bool
}

// ListScript returns the script that prints the observations of jobs,
// newest first, and an N record when Max cut the list short. It reads
// directory names, and meta.json only of the jobs it prints.
func ListScript(t Target, q List) (string, error) {
	return text(ListRequest(t, q))
}

// ListRequest is ListScript, its text made when asked for.
func ListRequest(t Target, q List) (Request, error) {
	if q.Before != "" && !jobdir.IsID(q.Before) {
		return Request{}, fmt.Errorf("invalid cursor %q: want a job id", q.Before)
	}
	return t.look("list.sh", q, func(c *config) {
		c.setBool("bg_allws", q.AllWorkspaces)
		c.set("bg_before", q.Before)
		c.setInt("bg_max", int64(q.Max))
		c.setBool("bg_owned", q.Owned)
		c.setBool("bg_countrun", !q.SkipRunningCount)
		c.setBool("bg_withports", q.Ports)
	})
}

// Signals returns the names of the signals bgjob may send, as ParseSignal
// returns them.
func Signals() []string {
	return []string{"TERM", "INT", "QUIT", "HUP", "KILL", "USR1", "USR2", "ALRM"}
}

// ParseSignal normalises a signal name ("term", "SIGTERM", "15") to the
// name the scripts use.
func ParseSignal(s string) (string, error) {
	up := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	byNum := map[string]string{"1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "10": "USR1", "12": "USR2", "14": "ALRM", "15": "TERM"}
	if n, ok := byNum[up]; ok {
		up = n
	}
	if !slices.Contains(Signals(), up) {
		return "", fmt.Errorf("unsupported signal %q (want TERM, INT, QUIT, HUP, KILL, USR1, USR2 or ALRM)", s)
	}
	return up, nil
}

// Stop selects what StopScript stops.
type Stop struct {
	// Refs names the jobs; All stops every job of the workspace that still
	// has live processes.
	Refs []string
	All  bool
	// Signal is sent first (a name from ParseSignal); after Grace, KILL.
	Signal string
	Grace  time.Duration
	// Reason is recorded in each job's stop file ("" for "stop").
	Reason string
}

// StopScript returns the script that stops jobs: for each, an O record
// with the outcome (stopped, gone, untied) and then its observation.
func StopScript(t Target, s Stop) (string, error) {
	sig, err := ParseSignal(s.Signal)
	if err != nil {
		return "", err
	}
	return t.refScript("stop.sh", s.Refs, func(c *config) {
		c.setBool("bg_all", s.All)
		c.set("bg_sig", sig)
		c.setInt("bg_grace", millis(s.Grace))
		reason := s.Reason
		if reason == "" {
			reason = "stop"
		}
		c.set("bg_reason", reason)
	})
}

// Wait selects what WaitScript waits for.
type Wait struct {
	Refs []string
	// Any returns when the first job ends instead of all of them.
	Any bool
	// Timeout gives up after this long (0: never) with a W timeout record.
	Timeout time.Duration
	// Once looks once: when the jobs have not ended, the script reports W
	// pending instead of waiting (the caller waits for a file event).
	Once bool
}

// WaitScript returns the script that waits on the host until the jobs
// have ended (exit_code written or wrapper gone), then prints their
// observations. It looks when an exit_code appears and every second where
// the host has GNU tail, else every tenth of a second. It ends early,
// printing nothing more, when its stdin closes.
func WaitScript(t Target, w Wait) (string, error) {
	return text(WaitRequest(t, w))
}

// WaitRequest is WaitScript, its text made when asked for.
func WaitRequest(t Target, w Wait) (Request, error) {
	return t.refLook("wait.sh", w.Refs, w, func(c *config) {
		c.setBool("bg_any", w.Any)
		c.setInt("bg_limit", millis(w.Timeout))
		c.setBool("bg_once", w.Once)
		c.setInt("bg_ffloor", int64(followFloor(false)/time.Millisecond))
		c.setInt("bg_ftick", int64(followTick/time.Second))
	})
}

// Watch selects the jobs whose changes WatchScript reports.
type Watch struct {
	// Refs names the jobs; none: the workspace's, with AllWorkspaces
	// every workspace's.
	Refs          []string
	AllWorkspaces bool
}

// WatchScript returns the script that reports, with a W changed record,
// each change of the jobs a follow of their events looks at (a job made
// or removed, a file of a job's events appearing, a wrapper gone), the
// first at once, until its stdin closes. It looks when such a file
// appears and every watchTick where the host has GNU tail, else every
// tenth of a second; at wrappers every watchLive.
func WatchScript(t Target, w Watch) (string, error) {
	return text(WatchRequest(t, w))
}

// WatchRequest is WatchScript, its text made when asked for.
func WatchRequest(t Target, w Watch) (Request, error) {
	return t.refLook("watch.sh", w.Refs, w, func(c *config) {
		c.setBool("bg_allws", w.AllWorkspaces)
		// No floor: a look of the watch is shell builtins alone, and a
		// file that appears is told at once.
		c.setInt("bg_ffloor", 0)
		c.setInt("bg_ftick", int64(watchTick/time.Second))
		c.setInt("bg_wlive", int64(watchLive/time.Second))
	})
}

// watchTick is how often a watch of events looks on a host with GNU tail
// when nothing woke it: a job made in the workspace is seen at the next
// tick, as no file names it before (tail watches files, not a
// directory's entries). Each tick is two processes on the host (the
// ticker's sleep, the trigger's dd).
const watchTick = time.Second

// watchLive is how often a watch of events looks whether the wrappers of
// the jobs not ended are alive: one killed with SIGKILL writes no file.
// A follow on bgjob's own machine asks /proc as often (eventsTick).
const watchLive = 5 * time.Second

// WaitFor selects what WaitForScript waits for: a line of a job's logs.
type WaitFor struct {
	Ref string
	// Pattern is a POSIX extended regular expression, matched by the
	// host's grep -E against each line, byte by byte (the C locale).
	Pattern string
	// Streams lists the logs to read: "stdout", "stderr" or both.
	Streams []string
	// Offsets says where to start reading each log (0: its start).
	Offsets map[string]int64
	// Marks holds, for each log read from an offset, the bytes just before
	// it (up to MarkLen) that the reader saw there: a log that no longer
	// holds them was truncated since, and is read again from its start
	// (a t record says so), however long it has grown.
	Marks map[string][]byte
	// Timeout gives up after this long (0: never) with a W timeout record.
	Timeout time.Duration
	// Once looks once: without a match, the script reports F records and
	// W pending instead of waiting (the caller waits for a file event).
	Once bool
}

// WaitForScript returns the script that waits, polling on the host, until
// a line of the job's logs matches the pattern: it prints the line in D
// records (at most 64 KiB of it) and the job's observation. A job that
// ends first gives W ended, a pattern grep cannot compile an E regex
// record. It ends early, printing nothing more, when its stdin closes.
func WaitForScript(t Target, w WaitFor) (string, error) {
	if _, err := refs([]string{w.Ref}); err != nil {
		return "", err
	}
	if strings.Contains(w.Pattern, "\n") {
		return "", fmt.Errorf("the pattern %q holds a newline: lines are matched one at a time", w.Pattern)
	}
	if len(w.Streams) == 0 {
		w.Streams = []string{"stdout", "stderr"}
	}
	for _, st := range w.Streams {
		if st != "stdout" && st != "stderr" {
			return "", fmt.Errorf("unknown stream %q", st)
		}
	}
	return t.script("wait_for.sh", func(c *config) {
		c.set("bg_ref", w.Ref)
		c.set("bg_re", w.Pattern)
		c.set("bg_streams", strings.Join(w.Streams, " "))
		c.setInt("bg_from_stdout", max(w.Offsets["stdout"], 0))
		c.setInt("bg_from_stderr", max(w.Offsets["stderr"], 0))
		c.setMark("bg_mark_stdout", w.Marks["stdout"])
		c.setMark("bg_mark_stderr", w.Marks["stderr"])
		c.setInt("bg_limit", millis(w.Timeout))
		c.setBool("bg_once", w.Once)
		c.setInt("bg_ffloor", int64(followFloor(false)/time.Millisecond))
		c.setInt("bg_ftick", int64(followTick/time.Second))
		c.setInt("bg_fceil", int64(followCeil(false)/time.Millisecond))
	})
}

// followFloor is the least time between two looks of a follow, of wait
// --for at a log that grows, or of a wait, where the host has GNU tail to
// wake them: a reader who types into the job (Logs.Interactive) sees
// its echo within 20 ms; any other within 200 ms, at most five looks a
// second however fast the job writes, each of which starts processes on
// the host.
func followFloor(interactive bool) time.Duration {
	if interactive {
		return 20 * time.Millisecond
	}
	return 200 * time.Millisecond
}

// followTick is how often a follow, a wait --for or a wait looks on a
// host with GNU tail when nothing woke it: its trigger wakes it when a log
// grows or the job's exit_code appears, and the tick is for a job whose
// wrapper died without writing one (or was removed). Each tick is three
// processes on the host (the ticker's sleep, stat, the trigger's dd): at
// one a second they were a quiet follow's largest cost after its start.
const followTick = 3 * time.Second

// followCeil is how long the least time between two looks grows to while
// each look finds new bytes: the floor doubles at every such look, up to
// a second (the trigger's ticker), so a job that writes all the time is
// looked at about once a second, as a quiet one is, not five times (each
// look starts about three processes on the host, five for wait --for);
// the first look after a quiet spell still comes within the floor. A
// reader who types into the job keeps the 20 ms.
func followCeil(interactive bool) time.Duration {
	if interactive {
		return followFloor(true)
	}
	return time.Second
}

// Logs selects what LogsScript prints.
type Logs struct {
	Ref string
	// Streams lists the logs to read: "stdout", "stderr" or both.
	Streams []string
	// At most one of these picks the range (none: the whole log): the last
	// Tail lines, the first Head lines, the last Bytes bytes, the bytes
	// from Offsets (when HasOffset; stream name to offset, 0 for a stream
	// not named), or, with New, the bytes Reader has not read yet (its
	// cursor moves as the reader reports, see CommitJob). Offset and New end the range before an incomplete UTF-8
	// sequence while the job runs, so text is never cut in the middle of a
	// character. A negative Tail, Head or Bytes asks for an empty range.
	Tail, Head int
	Bytes      int64
	Offsets    map[string]int64
	HasOffset  bool
	// Marks holds, for each offset of Offsets, the bytes of the log just
	// before it that the reader saw (up to MarkLen): a log that no longer
	// holds them there was truncated, and is read from its start, with a
	// t record.
	Marks  map[string][]byte
	New    bool
	Reader string
	// Follow keeps printing what is appended until the job ends.
	Follow bool
	// Interactive, with Follow, looks again at most 20 ms after a log
	// grows, where another follow waits 200 ms (followFloor), up to a
	// second while the log keeps growing (followCeil). A follow
	// looks as soon as a log grows and every second besides where the
	// host has GNU tail and mkfifo, else every tenth of a second.
	Interactive bool
	// MaxBytes, when positive, bounds the bytes of the ranges of all
	// streams together: a range that would be longer is cut (Tail and
	// Bytes keep its end, the others its start) and a Z record follows its
	// bytes. With New and Tail it sends the last Tail lines of what is new,
	// and the cursor moves to the end once they are delivered. Follow's
	// later reads are not bounded.
	MaxBytes int64
	// With New the script moves the cursor over nothing it sends: it
	// prints an A record after the last range and moves the cursor over
	// what the reader reports on stdin (see KindSent). Commit, when the
	// job found is CommitJob, first moves the cursor forward to these
	// offsets (stream name to offset): where an earlier read was
	// delivered, with the marks of the logs there (CommitMarks).
	CommitJob   string
	Commit      map[string]int64
	CommitMarks map[string][]byte
}

// Range is how logs.sh reads l's range: its bg_mode (all, tail, head,
// bytes, offset or new), its count of lines or bytes bg_n, and bg_zero,
// which asks New with Tail for an empty range.
func (l Logs) Range() (mode string, n int64, zero bool) {
	mode = "all"
	switch {
	case l.New && l.Tail != 0:
		mode, n, zero = "new", int64(max(l.Tail, 0)), l.Tail < 0
	case l.Tail != 0:
		mode, n = "tail", int64(max(l.Tail, 0))
	case l.Head != 0:
		mode, n = "head", int64(max(l.Head, 0))
	case l.Bytes != 0:
		mode, n = "bytes", max(l.Bytes, 0)
	case l.HasOffset:
		mode = "offset"
	case l.New:
		mode = "new"
	}
	return mode, n, zero
}

// LogsScript returns the script that prints a job's logs: the job's
// observation, then for each stream D records with the bytes of the range
// (see records.go). With Follow it goes on printing D records as the logs
// grow and, once the job has ended and the last bytes are out, prints the
// job's observation again.
func LogsScript(t Target, l Logs) (string, error) {
	return text(LogsRequest(t, l))
}

// LogsRequest is LogsScript, its text made when asked for.
func LogsRequest(t Target, l Logs) (Request, error) {
	if len(l.Streams) == 0 {
		l.Streams = []string{"stdout"}
	}
	for _, st := range l.Streams {
		if st != "stdout" && st != "stderr" {
			return Request{}, fmt.Errorf("unknown stream %q", st)
		}
	}
	if l.New {
		if l.Reader == "" {
			l.Reader = "default"
		}
		if err := jobdir.ValidateName("reader", l.Reader); err != nil {
			return Request{}, err
		}
	}
	if _, err := refs([]string{l.Ref}); err != nil {
		return Request{}, err
	}
	mode, n, zero := l.Range()
	return t.look("logs.sh", l, func(c *config) {
		c.set("bg_ref", l.Ref)
		c.set("bg_streams", strings.Join(l.Streams, " "))
		c.set("bg_mode", mode)
		c.setInt("bg_n", n)
		c.setBool("bg_zero", zero)
		c.setInt("bg_from_stdout", max(l.Offsets["stdout"], 0))
		c.setInt("bg_from_stderr", max(l.Offsets["stderr"], 0))
		c.setMark("bg_mark_stdout", l.Marks["stdout"])
		c.setMark("bg_mark_stderr", l.Marks["stderr"])
		c.set("bg_reader", l.Reader)
		c.setBool("bg_follow", l.Follow)
		c.setInt("bg_ffloor", int64(followFloor(l.Interactive)/time.Millisecond))
		c.setInt("bg_ftick", int64(followTick/time.Second))
		c.setInt("bg_fceil", int64(followCeil(l.Interactive)/time.Millisecond))
		c.setInt("bg_max", max(l.MaxBytes, 0))
		commit := func(st string) int64 {
			if off, ok := l.Commit[st]; ok && off >= 0 && l.CommitJob != "" {
				return off
			}
			return -1
		}
		c.set("bg_commit_id", l.CommitJob)
		c.setInt("bg_commit_stdout", commit("stdout"))
		c.setInt("bg_commit_stderr", commit("stderr"))
		c.setMark("bg_commitmark_stdout", l.CommitMarks["stdout"])
		c.setMark("bg_commitmark_stderr", l.CommitMarks["stderr"])
	})
}

// Remove selects what RemoveScript removes.
type Remove struct {
	// Refs names jobs; Dirs names job directories directly (as reported by
	// an earlier observation).
	Refs []string
	Dirs []string
	// Force stops a job that still has live processes first; without it
	// such a job is refused with an E busy record.
	Force bool
	Grace time.Duration
}

// RemoveScript returns the script that deletes ended jobs: an R record for
// each directory removed, E records for refusals.
func RemoveScript(t Target, r Remove) (string, error) {
	for _, d := range r.Dirs {
		if !strings.HasPrefix(d, "/") || strings.ContainsAny(d, "\n\x00") {
			return "", fmt.Errorf("invalid job directory %q", d)
		}
	}
	return t.refScript("rm.sh", r.Refs, func(c *config) {
		c.set("bg_dirs", strings.Join(r.Dirs, "\n"))
		c.setBool("bg_force", r.Force)
		c.setInt("bg_grace", millis(r.Grace))
	})
}

// Prune is the one prune rule: a job is removed when it has ended, has no
// live process, and either at least Keep ended jobs of the workspace are
// newer than it (0: no count limit) or it ended more than OlderThan ago (0:
// no age limit) by the host's clock; with Both, only when it is beyond
// each limit that is set (run's pass: beyond the newest Keep and ended more
// than OlderThan ago); with All, every ended job.
type Prune struct {
	Keep      int
	OlderThan time.Duration
	Both, All bool
	// DryRun reports the jobs without removing them.
	DryRun bool
}

// Check refuses limits that select no job, or All with a limit.
func (p Prune) Check() error {
	switch {
	case p.Keep < 0 || p.OlderThan < 0:
		return fmt.Errorf("invalid prune limits: keep %d, older than %s", p.Keep, p.OlderThan)
	case p.All && (p.Keep > 0 || p.OlderThan > 0 || p.Both):
		return errors.New("prune all takes no limits")
	case !p.All && p.Keep == 0 && p.OlderThan == 0:
		return errors.New("prune limits keep 0 and older than 0 set no limit, so select no job")
	}
	return nil
}

// set writes the rule's configuration (bg_keep, bg_age, bg_prule).
func (p Prune) set(c *config) {
	c.setInt("bg_keep", int64(p.Keep))
	c.setInt("bg_age", int64(p.OlderThan/time.Second))
	rule := "either"
	switch {
	case p.All:
		rule = "all"
	case p.Both:
		rule = "both"
	}
	c.set("bg_prule", rule)
}

// PruneScript returns the script that prunes the workspace by p's rule:
// for each job it selects, the observation and then an R record (or an E
// record saying why it stayed); with DryRun the observations only.
func PruneScript(t Target, p Prune) (string, error) {
	if err := p.Check(); err != nil {
		return "", err
	}
	return t.script("prune.sh", func(c *config) {
		p.set(c)
		c.setBool("bg_dry", p.DryRun)
	})
}

// Send selects what SendScript does.
type Send struct {
	Ref string
	// EOF ends the keeper that holds the FIFO open instead of writing.
	EOF bool
	// Timeout gives up after this long (0: never) with an E timeout record.
	Timeout time.Duration
}

// SendScript returns the script that writes its own stdin to the stdin
// FIFO of a job started with --stdin, or with EOF ends the keeper that
// holds the FIFO open, so the command reads end of file. It prints the
// job's observation, or an E ended record when the job ends before it
// has read everything.
func SendScript(t Target, s Send) (string, error) {
	if _, err := refs([]string{s.Ref}); err != nil {
		return "", err
	}
	return t.script("send.sh", func(c *config) {
		c.set("bg_ref", s.Ref)
		c.setBool("bg_eof", s.EOF)
		c.setInt("bg_limit", millis(s.Timeout))
	})
}

// Resize selects what ResizeScript does.
type Resize struct {
	Ref        string
	Cols, Rows int
}

// ResizeScript returns the script that gives the terminal of a job
// started with --pty r.Cols columns by r.Rows rows (the kernel sends
// SIGWINCH to its foreground process group) and records the size in the
// job's terminal file. It prints the job's observation, or refuses a job
// without a PTY (E nopty) or one that has ended (E ended).
func ResizeScript(t Target, r Resize) (string, error) {
	if _, err := refs([]string{r.Ref}); err != nil {
		return "", err
	}
	if r.Cols < 1 || r.Rows < 1 || r.Cols > 65535 || r.Rows > 65535 {
		return "", fmt.Errorf("terminal size %dx%d: columns and rows must be between 1 and 65535", r.Cols, r.Rows)
	}
	return t.script("resize.sh", func(c *config) {
		c.set("bg_ref", r.Ref)
		c.setInt("bg_cols", int64(r.Cols))
		c.setInt("bg_rows", int64(r.Rows))
	})
}

// Ready selects what ReadyScript records.
type Ready struct {
	Ref string
	// At is when the reader saw the job's ready line, by its own clock.
	At time.Time
}

// ReadyScript returns the script that records in the job's ready_at
// file (jobdir.EncodeReadyAt) that a line of its output matched its
// readiness pattern at r.At, unless the file is there already. It prints
// the job's observation.
func ReadyScript(t Target, r Ready) (string, error) {
	if _, err := refs([]string{r.Ref}); err != nil {
		return "", err
	}
	if r.At.IsZero() {
		return "", errors.New("a readiness needs its time")
	}
	return t.script("ready.sh", func(c *config) {
		c.set("bg_ref", r.Ref)
		c.set("bg_at", strings.TrimSuffix(string(jobdir.EncodeReadyAt(r.At)), "\n"))
	})
}
