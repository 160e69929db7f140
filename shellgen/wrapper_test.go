package shellgen_test

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/shellgen"
)

// TestWrapperParses checks job.sh, which the launch script writes and
// which runs on its own, parses under every shell.
func TestWrapperParses(t *testing.T) {
	tests := []struct {
		name string
		f    func(*shellgen.Launch)
	}{
		{"script", func(l *shellgen.Launch) { l.Meta.Command = "echo hi; exit 3" }},
		{"script with keyword-heavy text", func(l *shellgen.Launch) {
			l.Meta.Command = "if true; then\n  for i in 1 2; do echo \"$i\"; done\nfi\n'"
		}},
		{"script with shell", func(l *shellgen.Launch) { l.Meta.Command = "echo $0"; l.Meta.Shell = "/bin/ba sh" }},
		{"argv", func(l *shellgen.Launch) { l.Meta.Argv = []string{"if", "'", "\n", "-n", "$(x)"} }},
		{"cwd with leading dash", func(l *shellgen.Launch) { l.Meta.Command = "pwd"; l.Meta.Cwd = "-x y" }},
		{"absolute cwd", func(l *shellgen.Launch) { l.Meta.Command = "pwd"; l.Meta.Cwd = "/a b/'c'" }},
		{"env", func(l *shellgen.Launch) {
			l.Meta.Command = "env"
			l.Env = []string{"A=", "B=x=y", "C=it's\n$(x)", "_=1"}
		}},
		{"timeout", func(l *shellgen.Launch) {
			l.Meta.Argv = []string{"sleep", "10"}
			l.Timeout = 2500 * time.Millisecond
			l.Grace = time.Second
		}},
		{"everything", func(l *shellgen.Launch) {
			l.Meta.Command = "make"
			l.Meta.Shell = "bash"
			l.Meta.Cwd = "-src"
			l.Env = []string{"CC=gcc"}
			l.Timeout = time.Hour
			l.Grace = 3 * time.Second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := shellgen.Launch{Target: goldenTarget, Meta: goldenMeta()}
			tt.f(&l)
			wrapper, err := shellgen.WrapperScript(l)
			if err != nil {
				t.Fatal(err)
			}
			checkSyntax(t, wrapper)
			// The launch script carries exactly this wrapper.
			script, err := shellgen.LaunchScript(l)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := shellgen.Quote(wrapper)
			if !strings.Contains(script, "\nbg_wrapper="+q+"\n") || !strings.Contains(script, `printf '%s' "$bg_wrapper" >"$bg_d/job.sh"`) {
				t.Error("the launch script does not write this wrapper to job.sh")
			}
		})
	}
}

// TestMaxArgIsTheKernelLimit: an argument or environment entry of MaxArg
// bytes reaches a program; one byte more fails the exec with E2BIG.
func TestMaxArgIsTheKernelLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MaxArg is Linux's limit")
	}
	for _, n := range []int{shellgen.MaxArg, shellgen.MaxArg + 1} {
		arg := exec.Command("true", strings.Repeat("a", n))
		env := exec.Command("true")
		env.Env = []string{"A=" + strings.Repeat("a", n-2)}
		for what, cmd := range map[string]*exec.Cmd{"argument": arg, "environment entry": env} {
			err := cmd.Run()
			if tooBig := errors.Is(err, syscall.E2BIG); (n > shellgen.MaxArg) != tooBig || !tooBig && err != nil {
				t.Errorf("exec with an %s of %d bytes: %v", what, n, err)
			}
		}
	}
}
