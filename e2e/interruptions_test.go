package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
)

// The interruption harness (issue 18, item 16b): every verb is run as a
// process and cut short at a random moment, by SIGINT, SIGTERM or SIGKILL
// (to the CLI alone, or to its process group as Ctrl-C does) or, over SSH,
// by cutting its TCP connection in a proxy between the CLI and sshd. After
// each cut the invariants must hold:
//
//   - no job is lost: an interrupted run leaves a running job or a
//     directory without meta.json, and no other verb loses one;
//   - no phantom: an id run printed names a job that exists;
//   - logs --new never moves its reader's cursor past the bytes the CLI
//     delivered (wrote to its stdout);
//   - nothing is left: no script of the CLI keeps running on the host and
//     (locally) no temporary file is left in TMPDIR, within a generous
//     bound.
//
// The schedule (verbs, faults, delays) comes from a seed: set
// BGJOB_INTERRUPT_SEED to replay one; every failure names it. The timing
// of the machine is not replayed, so a replay reproduces the schedule, not
// always the failure: run it a few times. BGJOB_INTERRUPT_BUDGET (a Go
// duration, default 30s) bounds the time each target spends cutting, in
// whole rounds of the verbs; BGJOB_INTERRUPT_VERBS (a comma list) picks
// some of them.

// interruptVerbs are the verbs the harness cuts short.
var interruptVerbs = []string{"run", "run --wait", "status", "ls", "logs", "logs --new", "logs -f", "wait", "stop", "rm", "prune", "send"}

// interruptSeed returns the harness's seed: BGJOB_INTERRUPT_SEED, or one
// from the clock.
func interruptSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("BGJOB_INTERRUPT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BGJOB_INTERRUPT_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

func interruptBudget(t *testing.T) time.Duration {
	t.Helper()
	if s := os.Getenv("BGJOB_INTERRUPT_BUDGET"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("BGJOB_INTERRUPT_BUDGET=%q: %v", s, err)
		}
		return d
	}
	return 30 * time.Second
}

// TestInterruptions runs the harness locally and over SSH.
func TestInterruptions(t *testing.T) {
	t.Parallel()
	seed := interruptSeed(t)
	budget := interruptBudget(t)
	t.Logf("seed %d: BGJOB_INTERRUPT_SEED=%d replays this schedule", seed, seed)
	bin := bgjobBinary(t)

	local := t.TempDir()
	t.Cleanup(func() { killAll(local) })

	srv := sshtest.Start(t)
	proxy := startProxy(t, srv.Addr)
	remote := t.TempDir()
	t.Cleanup(func() { killAll(remote) })
	cfg := proxyConfig(t, srv, proxy)

	for i, h := range []*harness{
		{name: "local", flags: []string{"--root", local}, root: local},
		{name: "ssh", flags: []string{"--root", remote, "--ssh-config", cfg, "-H", "bgjob-test"}, root: remote, proxy: proxy, sshd: srv},
	} {
		h.bin, h.seed, h.budget = bin, seed, budget
		h.rng = rand.New(rand.NewPCG(seed, uint64(i)))
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			h.t = t
			h.run()
		})
	}
}

// harness is one target's run of the interruption harness.
type harness struct {
	t      *testing.T
	name   string
	flags  []string
	root   string
	proxy  *proxy          // the proxy sshd is reached through (SSH only)
	sshd   *sshtest.Server // (SSH only)
	bin    string
	seed   uint64
	budget time.Duration
	rng    *rand.Rand

	tmp   string // TMPDIR of every CLI
	trial int
	what  string // the current trial, for failures
	full  string // the log of the ended job "done"
	cuts  int    // cuts that found a live connection
	// faults: every fault in turn, in another order each time round, so
	// that each comes within any len(faults) trials.
	faults []string
	stats  map[string]int
	seen   map[string]bool // failures reported, so each is reported once
}

// fatalf and errorf report a failure with what replays it.
func (h *harness) errorf(format string, args ...any) {
	h.t.Helper()
	h.t.Errorf("%s: %s (BGJOB_INTERRUPT_SEED=%d)", h.what, fmt.Sprintf(format, args...), h.seed)
}

func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s: %s (BGJOB_INTERRUPT_SEED=%d)", h.what, fmt.Sprintf(format, args...), h.seed)
}

// cli runs the CLI to its end, uninterrupted.
func (h *harness) cli(args ...string) (int, string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return bgjob(ctx, append(append([]string{}, h.flags...), args...)...)
}

// mustRun runs the CLI and returns its stdout, failing on a non-zero exit.
func (h *harness) mustRun(args ...string) string {
	h.t.Helper()
	code, out, errs := h.cli(args...)
	if code != 0 {
		h.fatalf("bgjob %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

func (h *harness) run() {
	t := h.t
	h.tmp = t.TempDir()
	h.stats = map[string]int{}
	h.seen = map[string]bool{}
	h.what = "setup"
	// done: an ended job with a known log, long enough to be cut mid-read;
	// live: a job that takes input; slow: one that writes now and then.
	h.mustRun("run", "-q", "-n", "done", "--", "seq 1 200000")
	h.mustRun("wait", "--timeout", "60s", "done")
	h.full = h.mustRun("logs", "--stdout", "done")
	h.mustRun("run", "-q", "-n", "live", "--stdin", "--", "cat >/dev/null")
	h.mustRun("run", "-q", "-n", "slow", "--", "while :; do echo tick; sleep 0.2; done")

	verbs := append([]string{}, interruptVerbs...)
	if v := os.Getenv("BGJOB_INTERRUPT_VERBS"); v != "" {
		verbs = strings.Split(v, ",")
	}
	start := time.Now()
	// Whole rounds of every verb, each round in another order, until the
	// budget is spent.
	for h.trial = 0; h.trial%len(verbs) != 0 || time.Since(start) < h.budget; h.trial++ {
		if h.trial%len(verbs) == 0 {
			h.rng.Shuffle(len(verbs), func(i, j int) { verbs[i], verbs[j] = verbs[j], verbs[i] })
		}
		h.cut(verbs[h.trial%len(verbs)])
	}
	if h.proxy != nil && h.cuts == 0 {
		t.Errorf("no cut of the connection found one open: the SSH cuts prove nothing (BGJOB_INTERRUPT_SEED=%d)", h.seed)
	}
	t.Logf("%d trials in %s: %v; %d connection cuts", h.trial, time.Since(start).Round(time.Millisecond), h.stats, h.cuts)
}

// cut runs one trial: verb, cut short by a random fault after a random
// delay, then checks the invariants.
func (h *harness) cut(verb string) {
	// Drawn at random, a fault could miss a whole run: 24 trials under
	// load drew no drop once (a chance in a thousand), and the SSH cuts
	// proved nothing.
	if len(h.faults) == 0 {
		h.faults = []string{"INT", "TERM", "KILL", "group INT", "group TERM", "group KILL"}
		if h.proxy != nil {
			h.faults = append(h.faults, "drop", "drop")
		}
	}
	if h.trial%len(h.faults) == 0 {
		h.rng.Shuffle(len(h.faults), func(i, j int) { h.faults[i], h.faults[j] = h.faults[j], h.faults[i] })
	}
	fault := h.faults[h.trial%len(h.faults)]
	// Half the cuts come early, where launching and connecting happen.
	delay := time.Duration(h.rng.IntN(800)) * time.Millisecond
	if h.rng.IntN(2) == 0 {
		delay = time.Duration(h.rng.IntN(150)) * time.Millisecond
	}
	reader := fmt.Sprintf("r%d", h.trial)
	h.what = fmt.Sprintf("%s trial %d: %s cut by %s after %s", h.name, h.trial, verb, fault, delay)

	var args []string
	var stdin io.Reader
	switch verb {
	case "run":
		args = []string{"run", "-q", "-n", "cut", "--timeout", "2m", "--", "sleep 600"}
	case "run --wait":
		args = []string{"run", "--wait", "30s", "-n", "cut", "--", "sleep 0.5; echo done"}
	case "status":
		args = []string{"status", "done", "live", "slow"}
	case "ls":
		args = []string{"ls", "-A", "--limit", "0"}
	case "logs":
		args = []string{"logs", "done"}
	case "logs --new":
		args = []string{"logs", "--new", "--max-bytes", "0", "--reader", reader, "--stdout", "done"}
	case "logs -f":
		args = []string{"logs", "-f", "slow"}
	case "wait":
		args = []string{"wait", "--timeout", "30s", "slow"}
	case "stop":
		id := strings.TrimSpace(h.mustRun("run", "-q", "-n", "cut", "--", "sleep 600"))
		args = []string{"stop", id}
	case "rm":
		id := strings.TrimSpace(h.mustRun("run", "-q", "-n", "cut", "--", "true"))
		h.mustRun("wait", "--timeout", "60s", id)
		args = []string{"rm", id}
	case "prune":
		for range 3 {
			h.mustRun("-w", "scratch", "run", "-q", "--", "true")
		}
		args = []string{"-w", "scratch", "prune", "--keep", "0", "--older-than", "0"}
	case "send":
		args = []string{"send", "live", "-"}
		stdin = bytes.NewReader(bytes.Repeat([]byte("input line\n"), 100_000))
	}

	out, code := h.interrupt(args, stdin, fault, delay)
	h.stats[fault]++
	h.stats[verb]++
	h.check(verb, reader, out, code)
}

// interrupt starts the CLI with args, applies fault after delay and
// returns what it wrote to stdout (all of it was delivered: the test read
// it) and its exit status (-1: killed by a signal).
func (h *harness) interrupt(args []string, stdin io.Reader, fault string, delay time.Duration) ([]byte, int) {
	cmd := exec.Command(h.bin, append(append([]string{}, h.flags...), args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+h.tmp, "GORACE=atexit_sleep_ms=0", "BGJOB_HOST=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = stdin
	var errb bytes.Buffer
	cmd.Stderr = &errb
	// A pipe of our own: the CLI's exit is seen apart from the end of its
	// output (a child it left could hold the pipe).
	r, w, err := os.Pipe()
	if err != nil {
		h.fatalf("%v", err)
	}
	defer r.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		h.fatalf("%v", err)
	}
	var out bytes.Buffer
	read := make(chan struct{})
	// Half the time a slow reader: the CLI then blocks in its writes, and
	// the cut finds bytes read from the host but not yet delivered.
	slow := h.rng.IntN(2) == 0
	go func() {
		defer close(read)
		if !slow {
			io.Copy(&out, r)
			return
		}
		buf := make([]byte, 16<<10)
		for {
			n, err := r.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(delay):
		pid := cmd.Process.Pid
		switch sig, group := strings.CutPrefix(fault, "group "); {
		case fault == "drop":
			// A cut before the CLI has connected cuts nothing: cut again
			// until one finds its connection, as logs -f and wait would
			// otherwise never end.
		cutting:
			for {
				if h.proxy.cut() > 0 {
					h.cuts++
					break
				}
				select {
				case <-exited:
					break cutting
				case <-time.After(20 * time.Millisecond):
				}
			}
		case group:
			syscall.Kill(-pid, parseSig(sig))
		default:
			syscall.Kill(pid, parseSig(fault))
		}
	}
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		h.errorf("bgjob did not end within a minute of the cut; stderr: %s", errb.Bytes())
	}
	select {
	case <-read:
	case <-time.After(20 * time.Second):
		h.errorf("bgjob's stdout stayed open 20 s after it ended: a process it left holds it")
		r.Close()
		<-read
	}
	return out.Bytes(), cmd.ProcessState.ExitCode()
}

func parseSig(s string) syscall.Signal {
	return map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[s]
}

// check asserts the invariants after one trial.
func (h *harness) check(verb, reader string, out []byte, code int) {
	h.t.Helper()
	// Nothing of the CLI is left running on the host, and no temporary
	// file is left behind.
	if !eventually(20*time.Second, func() bool { return len(h.leftovers()) == 0 }) {
		h.errorf("left running after the CLI ended: %v", h.leftovers())
	}
	if !eventually(20*time.Second, func() bool { ents, _ := os.ReadDir(h.tmp); return len(ents) == 0 }) {
		ents, _ := os.ReadDir(h.tmp)
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		h.errorf("temporary files left in TMPDIR: %v", names)
		for _, n := range names {
			os.RemoveAll(filepath.Join(h.tmp, n))
		}
	}

	jobs := h.jobs()
	for _, j := range jobs {
		if j.Status == jobdir.StatusLost && !h.seen["lost "+j.ID] {
			h.seen["lost "+j.ID] = true
			h.errorf("job %s (%s, %q) is lost (%s)", j.ID, j.Name, j.Command, j.Reason)
		}
	}
	switch verb {
	case "run":
		// An id printed names a job that exists.
		if id := strings.TrimSpace(string(out)); jobdir.IsID(id) && !h.listed(jobs, id) {
			h.errorf("run printed %s, which ls does not list", id)
		}
	case "logs --new":
		// The next read starts at the cursor: what the cut read delivered
		// and what the next one prints together hold the whole log.
		rest := h.mustRun("logs", "--new", "--max-bytes", "0", "--reader", reader, "--stdout", "done")
		cursor := len(h.full) - len(rest)
		if !strings.HasSuffix(h.full, rest) {
			h.errorf("logs --new after the cut printed %d bytes that are not the end of the log", len(rest))
		} else if cursor > len(out) {
			h.errorf("logs --new delivered %d bytes before the cut, but its cursor is at %d: %d bytes lost", len(out), cursor, cursor-len(out))
		}
	}
	// Stop what the trial started, so jobs do not pile up.
	for _, j := range jobs {
		if j.Name == "cut" && j.Status == jobdir.StatusRunning {
			h.cli("stop", j.ID)
		}
	}
}

// jobs lists every job of every workspace.
func (h *harness) jobs() []jobdir.Job {
	h.t.Helper()
	out := h.mustRun("ls", "-A", "--json", "--limit", "0")
	var page struct{ Jobs []jobdir.Job }
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		h.fatalf("ls --json: %v: %q", err, out)
	}
	return page.Jobs
}

func (h *harness) listed(jobs []jobdir.Job, id string) bool {
	for _, j := range jobs {
		if j.ID == id {
			return true
		}
	}
	return false
}

// leftovers describes what still runs for the CLI: its scripts on the
// host ("sh -c SCRIPT" naming the root) and, over SSH, the processes under
// sshd that serve a connection.
func (h *harness) leftovers() []string {
	var left []string
	for _, s := range hostScripts(h.root) {
		first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
		left = append(left, "script "+first)
	}
	if h.sshd != nil {
		for _, pid := range sshdSessions(h.sshd) {
			left = append(left, "sshd session "+strconv.Itoa(pid))
		}
	}
	return left
}

// sshdSessions returns the pids of the processes serving connections to
// srv: the children of its listener (found by its config file).
func sshdSessions(srv *sshtest.Server) []int {
	var listener int
	var kids []int
	parents := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parents[pid], _ = strconv.Atoi(f[1])
		if cmdline, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline")); err == nil && bytes.Contains(cmdline, []byte(srv.ConfigPath)) && bytes.HasPrefix(cmdline, []byte(sshtest.SSHD)) {
			listener = pid
		}
	}
	for pid, ppid := range parents {
		if listener != 0 && ppid == listener {
			kids = append(kids, pid)
		}
	}
	return kids
}

// proxy forwards TCP connections to an address and can cut them all.
type proxy struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startProxy(t *testing.T, to string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, to: to, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// cut closes every connection through the proxy, as a dropped link would
// end them, and returns how many client connections it cut.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	n := len(p.conns) / 2
	clear(p.conns)
	return n
}

// proxyConfig writes an ssh_config whose host bgjob-test is srv reached
// through p, with a known_hosts for the proxy's address.
func proxyConfig(t *testing.T, srv *sshtest.Server, p *proxy) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	// The first Port wins in ssh_config.
	port := p.ln.Addr().(*net.TCPAddr).Port
	if err := srv.WriteConfig(cfg, "bgjob-test", "Port "+strconv.Itoa(port)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range srv.HostKeys {
		b.WriteString(knownhosts.Line([]string{knownhosts.Normalize(p.ln.Addr().String())}, k) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}
