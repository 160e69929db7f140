package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/jobdir"
)

// screenWait is how long a test waits for text to show on a tmux screen:
// generous, for a loaded machine.
const screenWait = 20 * time.Second

// tmuxTerm is a real terminal: a tmux server of the test's own, with one
// window of 120x40 running a command.
type tmuxTerm struct {
	t    *testing.T
	sock string
}

// needTerminal ends the test (testneed.Missing) when this machine lacks
// tmux, python3 or script (.ci/run installs them).
func needTerminal(t *testing.T) {
	t.Helper()
	for _, p := range []string{"tmux", "python3", "script"} {
		if _, err := exec.LookPath(p); err != nil {
			testneed.Missing(t, "no %s on this machine (.ci/run installs it)", p)
		}
	}
}

// newTmux starts cmd (a shell command) in a new tmux server's window; the
// server ends with the test. cmd's exit status shows as "[exited N]".
func newTmux(t *testing.T, cmd string) *tmuxTerm {
	t.Helper()
	// A socket of the test's own, removed with its directory.
	m := &tmuxTerm{t: t, sock: filepath.Join(t.TempDir(), "tmux")}
	m.tmux("-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", "120", "-y", "40", cmd+`; echo "[exited $?]"; sleep 600`)
	t.Cleanup(func() { exec.Command("tmux", "-S", m.sock, "kill-server").Run() })
	return m
}

func (m *tmuxTerm) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", m.sock}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types keys (tmux send-keys names: Enter, C-c, C-\\).
func (m *tmuxTerm) keys(keys ...string) { m.tmux(append([]string{"send-keys", "-t", "s"}, keys...)...) }

func (m *tmuxTerm) screen() string { return m.tmux("capture-pane", "-p", "-t", "s") }

// waitFor waits until the screen shows text, and fails the test with the
// screen when it does not.
func (m *tmuxTerm) waitFor(text string) {
	m.t.Helper()
	if !eventually(screenWait, func() bool { return strings.Contains(m.screen(), text) }) {
		m.t.Fatalf("the screen never showed %q:\n%s", text, m.screen())
	}
}

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// jobStatus returns the job's status as bgjob status reports it.
func jobStatus(t *testing.T, bin string, flags []string, ref string) jobdir.Job {
	t.Helper()
	out, err := exec.Command(bin, append(flags, "status", "--json", ref)...).Output()
	var jobs []jobdir.Job
	if err != nil || json.Unmarshal(out, &jobs) != nil || len(jobs) != 1 {
		t.Fatalf("status %s: %v %s", ref, err, out)
	}
	return jobs[0]
}

// runJob starts a job and returns its id; it is killed with the test.
func runJob(t *testing.T, bin string, flags []string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append(append(flags, "run", "-q"), args...)...).Output()
	if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command(bin, append(flags, "stop", "--grace", "0", id)...).Run() })
	return id
}

// attachCmd is the shell command that runs bgjob attach with flags.
func attachCmd(bin string, flags []string, args ...string) string {
	words := []string{shq(bin)}
	for _, w := range append(append(flags, "attach"), args...) {
		words = append(words, shq(w))
	}
	return strings.Join(words, " ")
}

// TestAttachPTY, in a real terminal: attach to python3 -i run with --pty,
// type a line, see it echoed as typed and read the answer on the line
// after it (as in a terminal: attach once typed blind and the answer
// landed on the prompt's line), resize the window and
// read the new size from the job, detach with Ctrl-\ (attach exits 0, the
// job runs on), attach again and end the job: attach exits with its
// status. Locally and over SSH.
func TestAttachPTY(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tg := range localAndSSH(t) {
		t.Run(tg.name, func(t *testing.T) {
			flags := tg.flags
			id := runJob(t, bin, flags, "--pty", "-n", "repl", "--", "python3", "-i", "-q")
			m := newTmux(t, attachCmd(bin, flags, "repl"))
			m.waitFor(">>>")
			m.keys("print(6*7)", "Enter")
			m.waitFor(">>> print(6*7)\n42\n")

			m.tmux("resize-window", "-t", "s", "-x", "100", "-y", "30")
			// The resize reaches the job before the line typed after it:
			// look until the size shows.
			if !eventually(screenWait, func() bool {
				m.keys("import os; print('size', *os.get_terminal_size())", "Enter")
				return eventually(2*time.Second, func() bool { return strings.Contains(m.screen(), "size 100 30") })
			}) {
				t.Fatalf("the job never saw the window's new size 100x30:\n%s", m.screen())
			}

			m.keys(`C-\`)
			m.waitFor("[exited 0]")
			if !strings.Contains(m.screen(), "bgjob: detached from job "+id) {
				t.Errorf("no word of the detach on the screen:\n%s", m.screen())
			}
			if j := jobStatus(t, bin, flags, id); j.Status != jobdir.StatusRunning {
				t.Fatalf("after the detach the job is %s, want running", j.Status)
			}

			m2 := newTmux(t, attachCmd(bin, flags, id))
			m2.waitFor("size 100 30") // the replay of the log's tail
			m2.keys("raise SystemExit(3)", "Enter")
			m2.waitFor("[exited 3]")
			if !strings.Contains(m2.screen(), "bgjob: job "+id+" exited 3") {
				t.Errorf("attach did not say how the job ended:\n%s", m2.screen())
			}
		})
	}
}

// TestAttachCtrlC: on a --pty job Ctrl-C is a key for the job, not a
// signal to attach: a job that traps INT says so and runs on, and attach
// goes on with it, until --detach-key.
func TestAttachCtrlC(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	flags := []string{"--root", t.TempDir()}
	id := runJob(t, bin, flags, "--pty", "--", `trap 'echo "got INT"' INT; echo ready; while :; do sleep 1 & wait $!; done`)
	m := newTmux(t, attachCmd(bin, flags, "--detach-key", "ctrl-]", id))
	m.waitFor("ready")
	m.keys("C-c")
	m.waitFor("got INT")
	m.keys("C-c")
	if !eventually(screenWait, func() bool { return strings.Count(m.screen(), "got INT") == 2 }) {
		t.Fatalf("the second Ctrl-C did not reach the job:\n%s", m.screen())
	}
	m.keys("C-]")
	m.waitFor("[exited 0]")
	if j := jobStatus(t, bin, flags, id); j.Status != jobdir.StatusRunning {
		t.Fatalf("after Ctrl-C and the detach the job is %s, want running", j.Status)
	}
}

// TestAttachLines: on a job without a PTY, run with --stdin, attach sends
// each line typed (with --stdin or without: a line typed and echoed went
// nowhere) and shows the job's output; Ctrl-\ detaches, the job runs on.
func TestAttachLines(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tc := range []struct{ name, flag string }{{"--stdin", "--stdin"}, {"by default", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			flags := []string{"--root", t.TempDir()}
			id := runJob(t, bin, flags, "--stdin", "--", `echo ready; while read -r l; do echo "got $l"; echo "err $l" >&2; done`)
			args := []string{id}
			if tc.flag != "" {
				args = []string{tc.flag, id}
			}
			m := newTmux(t, attachCmd(bin, flags, args...))
			m.waitFor("ready")
			m.keys("hello there", "Enter")
			m.waitFor("got hello there")
			m.waitFor("err hello there")
			m.keys(`C-\`)
			m.waitFor("[exited 0]")
			if j := jobStatus(t, bin, flags, id); j.Status != jobdir.StatusRunning {
				t.Fatalf("after the detach the job is %s, want running", j.Status)
			}
		})
	}
}

// TestAttachNotTerminal: attach with a pipe for stdin or stdout refuses,
// pointing at send and logs -f.
func TestAttachNotTerminal(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "--root", root, "attach", "some-job")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("attach without a terminal: %v, want exit status 2\n%s", err, stderr.String())
	}
	for _, want := range []string{"bgjob: error: attach needs a terminal", "bgjob send", "bgjob logs -f"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(root, "*", "*")); len(left) != 0 {
		t.Errorf("attach left %v", left)
	}
}

// topCmd is the shell command that runs bgjob top with flags and args,
// then prints whether the terminal is back in its canonical mode, as top
// found it.
func topCmd(bin string, flags []string, env string, args ...string) string {
	words := []string{env, shq(bin)}
	for _, w := range append(append(flags, "top"), args...) {
		words = append(words, shq(w))
	}
	return strings.Join(words, " ") + `; s=$?; stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e -icanon; (exit $s)`
}

// TestTop, in a real terminal: top shows a running and an ended job with
// their states, shows a job end and a job started later, filters, stops
// a job through s and y, and quits on q with the terminal restored;
// without colour under NO_COLOR; and SIGTERM restores the terminal too.
// The first top reads the jobs again only every hour (--interval): what
// it shows of a job starting or ending came through file events.
func TestTop(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	root := t.TempDir()
	flags := []string{"--root", root}
	gate := filepath.Join(t.TempDir(), "gate")
	runJob(t, bin, flags, "-n", "done-job", "--", "exit 5")
	gated := runJob(t, bin, flags, "-n", "gated", "--", "while [ ! -e "+gate+" ]; do sleep 0.1; done; exit 4")
	sleeper := runJob(t, bin, flags, "-n", "sleeper", "--", "sleep 600")

	m := newTmux(t, topCmd(bin, flags, "", "--interval", "1h"))
	m.waitFor("sleeper")
	row := func(name string) string {
		for _, l := range strings.Split(m.screen(), "\n") {
			if strings.HasPrefix(l, name+" ") {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		return ""
	}
	waitRow := func(name, want string) {
		t.Helper()
		if !eventually(screenWait, func() bool { return strings.Contains(row(name), want) }) {
			t.Fatalf("the row of %s never showed %q:\n%s", name, want, m.screen())
		}
	}
	waitRow("done-job", "exited 5")
	waitRow("gated", gated+" running -")
	if !strings.Contains(m.tmux("capture-pane", "-p", "-e", "-t", "s"), "\x1b[32mrunning") {
		t.Errorf("running is not green:\n%s", m.tmux("capture-pane", "-p", "-e", "-t", "s"))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitRow("gated", "exited 4")
	runJob(t, bin, flags, "-n", "late", "--", "exit 6")
	waitRow("late", "exited 6")

	m.keys("/", "sleeper", "Enter")
	if !eventually(screenWait, func() bool { return row("gated") == "" && row("sleeper") != "" }) {
		t.Fatalf("the filter /sleeper did not keep only the sleeper:\n%s", m.screen())
	}
	m.keys("s")
	m.waitFor("stop job " + sleeper + "? y/n")
	m.keys("y")
	waitRow("sleeper", "killed 143")
	m.keys("q")
	m.waitFor("[exited 0]")
	if !slices.Contains(strings.Split(m.screen(), "\n"), "icanon") {
		t.Errorf("after q the terminal is not canonical again:\n%s", m.screen())
	}

	m2 := newTmux(t, topCmd(bin, flags, "NO_COLOR=1"))
	m2.waitFor("sleeper")
	if s := m2.tmux("capture-pane", "-p", "-e", "-t", "s"); regexp.MustCompile("\x1b\\[3[1-7]m").MatchString(s) {
		t.Errorf("NO_COLOR top has colour:\n%q", s)
	}
	m2.tmux("run-shell", "pkill -TERM -x -P $(tmux -S "+m2.sock+" display -p -t s '#{pane_pid}') bgjob")
	m2.waitFor("[exited 130]")
	if !slices.Contains(strings.Split(m2.screen(), "\n"), "icanon") {
		t.Errorf("after SIGTERM the terminal is not canonical again:\n%s", m2.screen())
	}
}

// TestTopAllWorkspaces: top -A shows a job of another workspace than
// top's own, and stops it through s and y.
func TestTopAllWorkspaces(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	flags := []string{"--root", t.TempDir()}
	far := runJob(t, bin, append(flags, "-w", "far"), "-n", "far-job", "--", "sleep 600")
	m := newTmux(t, topCmd(bin, flags, "", "-A"))
	m.waitFor(far + " running")
	m.keys("s")
	m.waitFor("stop job " + far + "? y/n")
	m.keys("y")
	m.waitFor(far + " killed")
	m.keys("q")
	m.waitFor("[exited 0]")
}

// TestTopAttach, in a real terminal: in top, a on a job without a PTY
// says so; on python3 -i run with --pty it attaches: a line typed is
// answered on the screen, Ctrl-\ comes back to top, drawn again, and the
// job runs on. Locally and over SSH.
func TestTopAttach(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	for _, tg := range localAndSSH(t) {
		t.Run(tg.name, func(t *testing.T) {
			flags := tg.flags
			py := runJob(t, bin, flags, "--pty", "-n", "py", "--", "python3", "-i", "-q")
			plain := runJob(t, bin, flags, "-n", "plain", "--", "sleep 600")
			m := newTmux(t, topCmd(bin, flags, ""))
			m.waitFor(plain + " running")
			m.keys("a") // the newest job, plain, is selected
			m.waitFor("job " + plain + " has no terminal")
			m.keys("j", "a")
			m.waitFor(">>>")
			m.keys("print(6*7)", "Enter")
			answer := regexp.MustCompile(`(?m)^>>> print\(6\*7\)\s*\n42\s*$`) // the line typed, echoed, then the answer
			if !eventually(screenWait, func() bool { return answer.MatchString(m.screen()) }) {
				t.Fatalf("the screen never showed the line typed, then 42:\n%s", m.screen())
			}
			m.keys(`C-\`)
			m.waitFor("detached from job " + py + ", which runs on")
			if s := m.screen(); !strings.Contains(s, "bgjob top: 2 jobs") || !strings.Contains(s, py+" running") || strings.Contains(s, ">>>") {
				t.Errorf("after the detach top is not drawn again:\n%s", s)
			}
			if j := jobStatus(t, bin, flags, py); j.Status != jobdir.StatusRunning {
				t.Fatalf("after the detach the job is %s, want running", j.Status)
			}
			m.keys("q")
			m.waitFor("[exited 0]")
			if !slices.Contains(strings.Split(m.screen(), "\n"), "icanon") {
				t.Errorf("after q the terminal is not canonical again:\n%s", m.screen())
			}
		})
	}
}

// TestTopWideText: a command of wide characters (two cells each) longer
// than the window keeps top's screen whole: the title on the first line,
// no line wrapped onto the next, the prompt line last.
func TestTopWideText(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	flags := []string{"--root", t.TempDir()}
	runJob(t, bin, flags, "-n", "wide", "--", "sleep 600 # "+strings.Repeat("日本語", 40))
	runJob(t, bin, flags, "-n", "plain", "--", "sleep 600")
	m := newTmux(t, topCmd(bin, flags, ""))
	m.waitFor("wide ")
	lines := strings.Split(strings.TrimRight(m.screen(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "bgjob top: 2 jobs") {
		t.Errorf("the first line is not top's title:\n%s", m.screen())
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "日本語") {
			t.Errorf("a line wrapped onto the next:\n%s", m.screen())
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], "j/k move") {
		t.Errorf("the last line is not the prompt line:\n%s", m.screen())
	}
}

// TestTopSSH: over SSH, where no file events come, top reads the list on
// each tick: it shows a job, stops it through s and y, and shows it
// killed.
func TestTopSSH(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	cfg := sshConfig(t, sshtest.Start(t))
	flags := []string{"--root", t.TempDir(), "--ssh-config", cfg, "-H", "bgjob-test"}
	id := runJob(t, bin, flags, "-n", "far", "--", "sleep 600")
	m := newTmux(t, topCmd(bin, flags, ""))
	m.waitFor(id + " running")
	m.keys("s")
	m.waitFor("stop job " + id + "? y/n")
	m.keys("y")
	m.waitFor(id + " killed")
	m.keys("q")
	m.waitFor("[exited 0]")
}

// TestTopPorts, in a real terminal: top shows in a PORTS column the port
// a server started after top listens on (found at top's next look at
// ports, every ten seconds), and its labels in a LABELS column, neither
// column shown before; enter on the server says its ports and labels
// above its output. Locally and over SSH.
func TestTopPorts(t *testing.T) {
	needTerminal(t)
	t.Parallel()
	bin := bgjobBinary(t)
	// The system's python3 before a version manager's shim, whose
	// processes come and go as it starts.
	py := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3"
	}
	for _, tg := range localAndSSH(t) {
		t.Run(tg.name, func(t *testing.T) {
			flags := tg.flags
			quiet := runJob(t, bin, flags, "-n", "quiet", "--", "sleep 600")
			m := newTmux(t, topCmd(bin, flags, ""))
			m.waitFor(quiet + " running")
			if s := m.screen(); strings.Contains(s, "PORTS") || strings.Contains(s, "LABELS") {
				t.Errorf("top shows a PORTS or LABELS column while no job has ports or labels:\n%s", s)
			}
			web := runJob(t, bin, flags, "-n", "web", "--label", "app=web", "--port", "auto", "--",
				"sleep 1; exec "+py+` -m http.server --bind 127.0.0.1 "$PORT"`)
			port := jobStatus(t, bin, flags, web).Port
			if port == 0 {
				t.Fatalf("run --port auto recorded no port")
			}
			// NAME ID STATUS EXIT PROCS PORTS DURATION LABELS COMMAND
			row := regexp.MustCompile(fmt.Sprintf(`(?m)^web +%s +running +- +\d+ +%d +\S+ +app=web +sleep 1`, web, port))
			if !eventually(screenWait, func() bool { return row.MatchString(m.screen()) }) {
				t.Fatalf("the row of the server never showed its port %d and its label:\n%s", port, m.screen())
			}
			if quietRow := regexp.MustCompile(`(?m)^quiet +` + quiet + ` +running +- +\d+ +- +\S+ +- +sleep 600`); !quietRow.MatchString(m.screen()) {
				t.Errorf("the row of the job without a port or labels:\n%s", m.screen())
			}
			m.keys("k", "Enter") // up to web, the newest job, from quiet
			m.waitFor(fmt.Sprintf("ports: %d/tcp (127.0.0.1)  labels: app=web", port))
			m.keys("q") // back to the table
			m.waitFor("LABELS")
			m.keys("q")
			m.waitFor("[exited 0]")
		})
	}
}
