package via_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/runtime/via"
	"github.com/bgjob/bgjob/shellgen"
)

// transports returns the via commands of the two kinds a test runs
// through: one that passes its arguments on as they are (a stand-in for
// kubectl exec, podman exec: a script that runs them here after "--"),
// and one that joins them into a line for a remote shell (ssh, against a
// test sshd on 127.0.0.1).
func transports(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	execInto := filepath.Join(dir, "exec-into")
	script := "#!/bin/sh\n# exec-into HOST -- COMMAND...: runs COMMAND here.\nshift\n[ \"$1\" = -- ] && shift\nexec \"$@\"\n"
	if err := os.WriteFile(execInto, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmds := map[string]string{"args": execInto + " %h --"}
	if testing.Short() {
		return cmds
	}
	srv := sshtest.Start(t)
	cfg := filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "box", "LogLevel ERROR", "BatchMode yes"); err != nil {
		t.Fatal(err)
	}
	if err := srv.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	cmds["joined"] = "ssh -F " + cfg + " %h"
	return cmds
}

func TestExec(t *testing.T) {
	long := "echo " + strings.Repeat("x", shellgen.MaxArgScript) + " >/dev/null; echo long"
	tests := []struct {
		name   string
		script string
		stdin  string
		want   string
		status int // of an *ExitError; 0 for none
	}{
		{name: "output", script: `echo "a  b"; printf '%s\n' "$0"`, want: "a  b\nsh\n"},
		{name: "quotes", script: `echo 'it''s' "$(echo \"q\")" \$HOME`, want: "its \"q\" $HOME\n"},
		{name: "stdin", script: "cat; echo end", stdin: "line 1\nline 2\n", want: "line 1\nline 2\nend\n"},
		{name: "no stdin", script: "cat; echo end", want: "end\n"},
		{name: "exit", script: "echo out; echo oops >&2; exit 3", want: "out\n", status: 3},
		{name: "long", script: long, stdin: "after\n", want: "long\n"},
		{name: "long reads stdin", script: long + "; cat", stdin: "after\n", want: "long\nafter\n"},
	}
	for kind, command := range transports(t) {
		t.Run(kind, func(t *testing.T) {
			r, err := via.New(command, "box")
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var out bytes.Buffer
					var in *strings.Reader
					if tt.stdin != "" {
						in = strings.NewReader(tt.stdin)
					}
					var err error
					if in != nil {
						err = r.Exec(context.Background(), tt.script, in, &out)
					} else {
						err = r.Exec(context.Background(), tt.script, nil, &out)
					}
					if got := out.String(); got != tt.want {
						t.Errorf("stdout %q, want %q", got, tt.want)
					}
					var xe *via.ExitError
					switch {
					case tt.status == 0 && err != nil:
						t.Fatalf("Exec: %v", err)
					case tt.status != 0 && (!errors.As(err, &xe) || xe.Status != tt.status || !strings.Contains(xe.Stderr, "oops")):
						t.Fatalf("Exec: %v, want an *ExitError of status %d saying oops", err, tt.status)
					}
				})
			}
		})
	}
}

// TestCancel checks that a cancelled script ends on the host, with the
// processes of its group, though the command here would leave them.
func TestCancel(t *testing.T) {
	for kind, command := range transports(t) {
		t.Run(kind, func(t *testing.T) {
			r, err := via.New(command, "box")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				// The script ignores its stdin's end and TERM: only the
				// kill of its group ends the sleep.
				done <- r.Exec(ctx, "trap '' TERM HUP INT; sleep 7003 & echo $! >"+pidFile+"; wait", nil, nil)
			}()
			pid := 0
			eventually(t, 10*time.Second, func() bool {
				b, err := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil && pid > 0
			})
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Exec: %v, want context.Canceled", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Exec did not return after its ctx ended")
			}
			eventually(t, 10*time.Second, func() bool { return !alive(pid) })
		})
	}
}

// TestCommandFails checks the errors of a command that cannot run or ends
// before the host's shell starts: they name the host and say what the
// command said.
func TestCommandFails(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    string
	}{
		{name: "not found", command: "bgjob-no-such-command %h", want: `box: running bgjob-no-such-command: exec: "bgjob-no-such-command": executable file not found`},
		{name: "exits 1", command: `sh -c "echo no such pod: \$0 >&2; exit 1"`, want: "box: sh exited with status 1 before the host's sh started: no such pod: box"},
		{name: "killed", command: `sh -c "kill -9 \$\$"`, want: "box: sh exited with status 137 before the host's sh started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := via.New(tt.command, "box")
			if err != nil {
				t.Fatal(err)
			}
			err = r.Exec(context.Background(), "echo hi", nil, nil)
			var ve *via.Error
			if !errors.As(err, &ve) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Exec: %v, want a *via.Error starting %q", err, tt.want)
			}
		})
	}
}

// TestPrompt checks that a command that asks for a password and waits
// ends with its ctx, and that what it asked is kept.
func TestPrompt(t *testing.T) {
	r, err := via.New(`sh -c "printf 'Password: ' >&2; sleep 60" %h`, "box")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = r.Exec(ctx, "echo hi", nil, nil)
	var said interface{ Said() string }
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &said) || said.Said() != "Password:" {
		t.Fatalf("Exec: %v, want context.DeadlineExceeded saying Password:", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Exec took %v after its deadline", d)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		command string
		want    []string
		err     bool
	}{
		{command: "kubectl exec -i %h --", want: []string{"kubectl", "exec", "-i", "%h", "--"}},
		{command: `ssh -o 'ProxyCommand ssh -W %%h:22 jump' %h`, want: []string{"ssh", "-o", "ProxyCommand ssh -W %%h:22 jump", "%h"}},
		{command: `a "b \"c\" \$d \x" e\ f`, want: []string{"a", `b "c" $d \x`, "e f"}},
		{command: `a '' ""`, want: []string{"a", "", ""}},
		{command: "a $HOME", err: true},
		{command: "a; b", err: true},
		{command: "a | b", err: true},
		{command: `a "$(b)"`, err: true},
		{command: "a 'b", err: true},
		{command: `a "b`, err: true},
		{command: "  ", err: true},
	}
	for _, tt := range tests {
		got, err := via.Split(tt.command)
		if (err != nil) != tt.err || !tt.err && strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Split(%q) = %q, %v; want %q (error %v)", tt.command, got, err, tt.want, tt.err)
		}
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		words []string
		want  string
		err   bool
	}{
		{words: []string{"podman", "exec", "-i"}, want: "podman exec -i web-0"},
		{words: []string{"kubectl", "exec", "-i", "%h", "--"}, want: "kubectl exec -i web-0 --"},
		{words: []string{"ssh", "-o", "ProxyCommand ssh -W %%h:22 jump", "%h"}, want: "ssh -o ProxyCommand ssh -W %h:22 jump web-0"},
		{words: []string{"lxc", "exec", "%h%%"}, want: "lxc exec web-0%"},
		{words: []string{"a", "%x"}, err: true},
		{words: []string{"a", "b%"}, err: true},
	}
	for _, tt := range tests {
		got, err := via.Expand(tt.words, "web-0")
		if (err != nil) != tt.err || !tt.err && strings.Join(got, " ") != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q (error %v)", tt.words, got, err, tt.want, tt.err)
		}
	}
}

func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether process pid runs (a zombie counts as gone).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || len(b) < i+3 || b[i+2] != 'Z'
}

// asExit reports whether err is an *ExitError, setting *xe.
func asExit(err error, xe **via.ExitError) bool { return errors.As(err, xe) }
