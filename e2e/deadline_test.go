package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

	"github.com/bgjob/bgjob/internal/sshtest"
)

// slack is what a loaded 2-core machine may add to a deadline: generous,
// since the bug these tests guard against is a call that never ends (10 s
// failed with the suite's own load and two busy loops: an rm with a 2 s
// deadline took 12 s), and still well short of hangAfter.
const slack = 25 * time.Second

// hangAfter is when a call that should have ended counts as hung.
const hangAfter = time.Minute

// longA is a job whose first line is 4,000 a's, on which grep -E takes
// exponential time for a pattern such as ^(a|a?)+\1$; it then sleeps.
const longA = `head -c 4000 /dev/zero | tr '\0' a; echo; sleep 600`

// procsWith returns the command lines of live processes whose command
// line contains s.
func procsWith(s string) []string {
	var found []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); err == nil {
			f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
			if len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		found = append(found, filepath.Base(filepath.Dir(p))+" "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return found
}

// noneLeft fails the test unless, within slack, no process whose command
// line holds s remains: the host-side processes of the call are gone.
func noneLeft(t *testing.T, s string) {
	t.Helper()
	if !eventually(slack, func() bool { return len(procsWith(s)) == 0 }) {
		t.Errorf("processes of the call outlived it: %q", procsWith(s))
	}
}

// TestWaitForSlowMatchEndsOnTime: wait --for --timeout 2s ends on time
// although grep takes exponential time on the job's long line, or the job
// floods its log, locally and over SSH, and the wait's sh and grep on the
// host are gone after it. On this machine the error says that the wait
// timed out, and no host that did not answer.
func TestWaitForSlowMatchEndsOnTime(t *testing.T) {
	t.Parallel()
	// A pattern of its own for each case, so that the processes a case
	// looks for are its own.
	const flood = `yes a-line-of-a-job-that-floods-its-log`
	cases := []struct {
		name    string
		ssh     bool
		cmd     string
		pattern string
		want    string
	}{
		{"local", false, longA, `^(a|a?)+\1$`, `bgjob: error: waiting 2s for "^(a|a?)+\\1$": timed out` + "\n"},
		{"ssh", true, longA, `^(a?|a)+\1$`, "timed out"},
		{"local flood", false, flood, `^never-local$`, `bgjob: error: waiting 2s for "^never-local$": timed out` + "\n"},
		{"ssh flood", true, flood, `^never-ssh$`, "timed out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var g []string
			if tc.ssh {
				_, _, g = sshJobs(t)
			} else {
				root := t.TempDir()
				t.Cleanup(func() { killAll(root) })
				g = []string{"--root", root}
			}
			ctx := context.Background()
			code, id, errs := bgjob(ctx, append(g, "run", "-q", "--", tc.cmd)...)
			if code != 0 {
				t.Fatalf("run: %d %s", code, errs)
			}
			id = strings.TrimSpace(id)
			if !eventually(slack, func() bool {
				_, out, _ := bgjob(ctx, append(g, "logs", "--bytes", "10", id)...)
				return strings.Contains(out, "aaaa") || strings.Contains(out, "log\n")
			}) {
				t.Fatal("the job did not write its line")
			}
			start := time.Now()
			code, _, errs = bgjob(ctx, append(g, "wait", "--for", tc.pattern, "--timeout", "2s", id)...)
			took := time.Since(start)
			if code != 124 || !strings.Contains(errs, tc.want) {
				t.Errorf("wait --for: exit %d, stderr %q; want 124 and %q", code, errs, tc.want)
			}
			if took > 2*time.Second+slack {
				t.Errorf("wait --for --timeout 2s took %v", took)
			}
			noneLeft(t, tc.pattern)
		})
	}
}

// TestWaitForClientKilledOverSSH: a bgjob wait --for killed with SIGKILL
// while the host's grep works leaves nothing running on the host: the
// script sees its stdin end and ends its process group.
func TestWaitForClientKilledOverSSH(t *testing.T) {
	t.Parallel()
	_, _, g := sshJobs(t)
	ctx := context.Background()
	code, id, errs := bgjob(ctx, append(g, "run", "-q", "--", longA)...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)
	const pattern = `^(a|a?)+\1\1$`
	cmd := exec.Command(bgjobBinary(t), append(g, "wait", "--for", pattern, id)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The host's grep (this machine is the host) names the pattern.
	grepping := func() bool {
		for _, p := range procsWith(pattern) {
			if strings.Contains(p, "grep") {
				return true
			}
		}
		return false
	}
	if !eventually(slack, grepping) {
		t.Fatalf("no grep ran on the host: %q", procsWith(pattern))
	}
	cmd.Process.Kill()
	cmd.Wait()
	noneLeft(t, pattern)
}

// slowHosts is a set of hosts that never answer, each in its own way, and
// one good host, in one ssh_config.
type slowHosts struct {
	cfg  string
	root string
	dir  string
}

// startSlowHosts starts:
//   - block: sshd whose sessions never start the command (as a login
//     shell that never returns; keepalives are answered);
//   - silent: a listener that accepts TCP connections and never speaks
//     (ConnectTimeout 60, so that only bgjob's own deadline can end it
//     in time);
//   - midstream: sshd whose sessions run the command, pass on the start
//     of its output, then stop the sshd serving the connection (SIGSTOP):
//     nothing more arrives, keepalives included;
//   - good: a normal sshd.
func startSlowHosts(t *testing.T) *slowHosts {
	t.Helper()
	dir := t.TempDir()
	h := &slowHosts{dir: dir, root: t.TempDir()}
	t.Cleanup(func() { killAll(h.root) })
	// Every process the fixtures start names dir: end their groups (each
	// a session sshd made) when the test ends.
	t.Cleanup(func() {
		for _, p := range procsWith(dir) {
			if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
				if pg, err := syscall.Getpgid(pid); err == nil && pg > 1 {
					syscall.Kill(-pg, syscall.SIGCONT)
					syscall.Kill(-pg, syscall.SIGKILL)
				}
			}
		}
		// The sshd processes midstream.sh stopped are in no such group:
		// each left a file named with its pid (they were left stopped,
		// dozens a run, before).
		stopped, _ := filepath.Glob(filepath.Join(dir, "midstream.sh.stopped.*"))
		for _, f := range stopped {
			if pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Ext(f), ".")); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	block := write("block.sh", "#!/bin/sh\nsleep 600\n")
	// $PPID is the sshd process serving the session (its login shell
	// execs this script). The pause lets sshd pass the first bytes on.
	mid := write("midstream.sh", `#!/bin/sh
sshd=$PPID
eval "$SSH_ORIGINAL_COMMAND" | {
	head -c 64
	sleep 0.3
	kill -STOP "$sshd" && : >"$0.stopped.$sshd"
	sleep 600
}
`)
	var cfg strings.Builder
	entry := func(alias string, srv *sshtest.Server) {
		kh := filepath.Join(dir, alias+".known_hosts")
		if err := srv.WriteKnownHosts(kh, false); err != nil {
			t.Fatal(err)
		}
		cfg.WriteString(srv.ConfigEntry(alias, kh))
	}
	entry("block", sshtest.Start(t, "ForceCommand "+block))
	entry("midstream", sshtest.Start(t, "ForceCommand "+mid))
	entry("good", sshtest.Start(t))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	fmt.Fprintf(&cfg, "Host silent\n  HostName 127.0.0.1\n  Port %d\n  ConnectTimeout 60\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		ln.Addr().(*net.TCPAddr).Port, filepath.Join(dir, "silent.known_hosts"))

	h.cfg = filepath.Join(dir, "config")
	if err := os.WriteFile(h.cfg, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// stoppedSSHD reports whether the midstream host stopped an sshd that is
// still stopped: the fault the midstream cases are about happened.
func (h *slowHosts) stoppedSSHD() bool {
	marks, _ := filepath.Glob(filepath.Join(h.dir, "midstream.sh.stopped.*"))
	for _, m := range marks {
		st, err := os.ReadFile("/proc/" + m[strings.LastIndexByte(m, '.')+1:] + "/stat")
		if err == nil && bytes.Contains(st, []byte("(sshd) T ")) {
			return true
		}
	}
	return false
}

// call is one bgjob run against the slow hosts, and what came of it.
type call struct {
	hosts string
	args  []string
	code  int
	out   string
	errs  string
	took  time.Duration
	err   error // the call could not run, or hung
}

// run runs the bgjob binary with BGJOB_HOST_TIMEOUT=2s against c.hosts
// and fills in the outcome. A call that has not ended after hangAfter is
// killed (its goroutines dumped on stderr) and gets an error: before the
// deadlines, every one of these hung forever.
func (h *slowHosts) run(bin string, c *call) {
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--root", h.root, "--ssh-config", h.cfg, "-H", c.hosts}, c.args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "BGJOB_HOST_TIMEOUT=2s", "BGJOB_HOST=", "SSH_AUTH_SOCK=", "GORACE=atexit_sleep_ms=0")
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
	start := time.Now()
	err := cmd.Run()
	c.took, c.out, c.errs = time.Since(start), out.String(), errb.String()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.err = fmt.Errorf("bgjob %s did not end within %v: %s", strings.Join(c.args, " "), hangAfter, c.errs)
	case errors.As(err, &ee):
		c.code = ee.ExitCode()
	case err != nil:
		c.err = err
	}
}

// runAll runs the calls at once: the harness takes as long as its slowest
// call, not their sum.
func (h *slowHosts) runAll(t *testing.T, calls []*call) {
	bin := bgjobBinary(t)
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.run(bin, c)
		}()
	}
	wg.Wait()
}

// TestSlowHosts: under each host that stalls, every verb ends within its
// deadline (BGJOB_HOST_TIMEOUT=2s; stop's grace and prune's on top; a
// wait's own --timeout) with the host's error, and exits non-zero. Over a
// fan-out each host has its own deadline and the others' answers stand.
func TestSlowHosts(t *testing.T) {
	t.Parallel()
	h := startSlowHosts(t)
	// The deadline each verb has, and its exit status when it expires.
	verbs := []struct {
		name  string
		args  []string
		limit time.Duration
		code  int
		want  string // in stderr, after "bgjob: error: HOST: "
	}{
		{"run", []string{"run", "--", "true"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"run-wait", []string{"run", "--wait", "2s", "--", "true"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"status", []string{"status", "x"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"ls", []string{"ls"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"logs", []string{"logs", "x"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"rm", []string{"rm", "x"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"prune", []string{"prune"}, 4 * time.Second, 1, "no answer within 4s (--host-timeout)"},
		{"send", []string{"send", "x", "data"}, 2 * time.Second, 1, "no answer within 2s (--host-timeout)"},
		{"stop", []string{"stop", "--grace", "1s", "x"}, 3 * time.Second, 1, "no answer within 3s (--host-timeout)"},
		{"wait", []string{"wait", "--timeout", "2s", "x"}, 2 * time.Second, 124, "timed out"},
		{"wait-for", []string{"wait", "--for", "x", "--timeout", "2s", "x"}, 2 * time.Second, 124, "timed out"},
	}
	hosts := []string{"block", "silent", "midstream"}

	// Jobs on the good host for the fan-out calls.
	ls := &call{hosts: "good", args: []string{"run", "-q", "-n", "fleetls", "--", "sleep 600"}}
	h.run(bgjobBinary(t), ls)
	job := &call{hosts: "good", args: []string{"run", "-q", "--", "sleep 600"}}
	h.run(bgjobBinary(t), job)
	for _, c := range []*call{ls, job} {
		if c.err != nil || c.code != 0 {
			t.Fatalf("run on good: %d %v %s", c.code, c.err, c.errs)
		}
	}
	var calls []*call
	for _, host := range hosts {
		for _, v := range verbs {
			calls = append(calls, &call{hosts: host, args: v.args})
		}
	}
	h.runAll(t, calls)
	// The fan-outs run on their own, with 5s: the good host must answer
	// in time, on a loaded machine too.
	fleetLs := &call{hosts: "block,good,silent", args: []string{"--host-timeout", "5s", "ls"}}
	fleetWait := &call{hosts: "good,silent", args: []string{"wait", "--timeout", "5s", strings.TrimSpace(job.out)}}
	h.runAll(t, []*call{fleetLs, fleetWait})

	for i, c := range calls {
		v := verbs[i%len(verbs)]
		t.Run(c.hosts+"/"+v.name, func(t *testing.T) {
			if c.err != nil {
				t.Fatal(c.err)
			}
			if c.code != v.code || !strings.HasPrefix(c.errs, "bgjob: error: ") || !strings.Contains(c.errs, v.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", c.code, c.errs, v.code, v.want)
			}
			if !strings.HasPrefix(c.errs, "bgjob: error: "+c.hosts+": ") {
				t.Errorf("stderr %q does not name the host", c.errs)
			}
			if c.took > v.limit+slack {
				t.Errorf("took %v, deadline %v", c.took, v.limit)
			}
		})
	}
	t.Run("midstream/stopped", func(t *testing.T) {
		if !h.stoppedSSHD() {
			t.Errorf("no sshd of the midstream host was stopped mid-stream")
		}
	})
	t.Run("fleet/ls", func(t *testing.T) {
		c := fleetLs
		if c.err != nil {
			t.Fatal(c.err)
		}
		if c.code != 1 || !strings.Contains(c.out, "good") || !strings.Contains(c.out, "fleetls") {
			t.Errorf("ls: exit %d, stdout %q; want 1 and good's job", c.code, c.out)
		}
		for _, host := range []string{"block", "silent"} {
			if want := "bgjob: error: " + host + ": no answer within 5s (--host-timeout)\n"; !strings.Contains(c.errs, want) {
				t.Errorf("stderr %q lacks %q", c.errs, want)
			}
		}
		if c.took > 5*time.Second+slack {
			t.Errorf("took %v", c.took)
		}
	})
	t.Run("fleet/wait", func(t *testing.T) {
		c := fleetWait
		if c.err != nil {
			t.Fatal(c.err)
		}
		// silent's first answer has --host-timeout (2s, shorter than the
		// wait's 5s); good's wait times out.
		if c.code != 124 || !strings.Contains(c.errs, "bgjob: error: silent: no answer within 2s (--host-timeout)\n") || !strings.Contains(c.errs, "bgjob: error: good: waiting") {
			t.Errorf("wait: exit %d, stderr %q; want 124, good's timeout and silent's --host-timeout", c.code, c.errs)
		}
		if c.took > 5*time.Second+slack {
			t.Errorf("took %v", c.took)
		}
	})
}

// TestStalledHostWaitingVerbs: a host whose sessions open but never run
// anything (block: ForceCommand sleep) holds no waiting verb past
// --host-timeout (BGJOB_HOST_TIMEOUT=2s) for its first answer: logs -f,
// wait, wait --for and events -f, on that host alone and in a fan-out beside a good
// host, end with one line "bgjob: error: block: no answer within 2s
// (--host-timeout)" and exit 1 (a host that did not answer), the good
// host's output and result standing. A wait whose own --timeout is longer
// gets the same; one whose --timeout is shorter times out (124) as before.
// Before, each hung (logs -f, wait without --timeout) or waited out its
// whole --timeout.
func TestStalledHostWaitingVerbs(t *testing.T) {
	t.Parallel()
	h := startSlowHosts(t)
	done := &call{hosts: "good", args: []string{"run", "-q", "--", "echo fanout-line"}}
	h.run(bgjobBinary(t), done)
	id := strings.TrimSpace(done.out)
	ended := &call{hosts: "good", args: []string{"wait", id}}
	h.run(bgjobBinary(t), ended)
	for _, c := range []*call{done, ended} {
		if c.err != nil || c.code != 0 {
			t.Fatalf("%s on good: %d %v %s", c.args[0], c.code, c.err, c.errs)
		}
	}
	const noAnswer = "bgjob: error: block: no answer within 2s (--host-timeout)\n"
	cases := []struct {
		name    string
		c       *call
		code    int
		errLine string // a line of stderr
		out     string // in stdout
	}{
		{"alone/logs-f", &call{hosts: "block", args: []string{"logs", "-f", id}}, 1, noAnswer, ""},
		{"alone/wait", &call{hosts: "block", args: []string{"wait", id}}, 1, noAnswer, ""},
		{"alone/wait-timeout", &call{hosts: "block", args: []string{"wait", "--timeout", "60s", id}}, 1, noAnswer, ""},
		{"alone/wait-for", &call{hosts: "block", args: []string{"wait", "--for", "x", id}}, 1, noAnswer, ""},
		{"alone/wait-for-timeout", &call{hosts: "block", args: []string{"wait", "--for", "x", "--timeout", "60s", id}}, 1, noAnswer, ""},
		{"fleet/logs-f", &call{hosts: "block,good", args: []string{"logs", "-f", id}}, 1, noAnswer, "good: fanout-line\n"},
		{"fleet/logs-f-json", &call{hosts: "good,block", args: []string{"logs", "-f", "--json", id}}, 1, noAnswer, `"fanout-line\n"`},
		{"fleet/wait", &call{hosts: "good,block", args: []string{"wait", id}}, 1, noAnswer, ""},
		{"fleet/wait-timeout", &call{hosts: "block,good", args: []string{"wait", "--timeout", "60s", "--json", id}}, 1, noAnswer, `"exit_code":0`},
		{"alone/events-f", &call{hosts: "block", args: []string{"events", "-f"}}, 1, noAnswer, ""},
		{"fleet/events-f", &call{hosts: "good,block", args: []string{"events", "-f", "--until-done", "--json", id}}, 1, noAnswer, `"event":"ended"`},
		// The wait's own --timeout comes first: it decides, as before.
		// It names the host, as a fan-out's line of it does.
		{"alone/wait-short-timeout", &call{hosts: "block", args: []string{"--host-timeout", "60s", "wait", "--timeout", "2s", id}}, 124, "bgjob: error: block: waiting 2s: timed out (the host did not answer)\n", ""},
		{"alone/wait-for-short-timeout", &call{hosts: "block", args: []string{"--host-timeout", "60s", "wait", "--for", "x", "--timeout", "2s", id}}, 124, "bgjob: error: block: waiting 2s: timed out (the host did not answer)\n", ""},
	}
	calls := make([]*call, len(cases))
	for i, tc := range cases {
		calls[i] = tc.c
	}
	h.runAll(t, calls)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if c.err != nil {
				t.Fatal(c.err)
			}
			if c.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", c.code, tc.code, c.errs)
			}
			if tc.errLine != "" && !strings.Contains("\n"+c.errs, "\n"+tc.errLine) {
				t.Errorf("stderr %q lacks the line %q", c.errs, tc.errLine)
			}
			if tc.errLine != "" && strings.Count(c.errs, "block") != 1 {
				t.Errorf("stderr %q: want one line for block", c.errs)
			}
			if tc.code == 124 && !strings.Contains(c.errs, "timed out") {
				t.Errorf("stderr %q: want the wait's timeout", c.errs)
			}
			if !strings.Contains(c.out, tc.out) {
				t.Errorf("stdout %q lacks %q", c.out, tc.out)
			}
			if strings.Contains(c.errs, "good") {
				t.Errorf("stderr %q: the good host failed", c.errs)
			}
		})
	}
}
