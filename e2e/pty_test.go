package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/sshtest"
)

// TestPTYNeedsScript: a host without a capable script(1) refuses --pty
// with an error that names what is missing, and no job is made (the root
// stays empty): locally with a PATH without script, and with scripts that
// answer as busybox's does and as util-linux 2.34 (no -E) would, locally
// and over SSH (the test sshd gives its sessions a PATH that starts with
// the fake busybox one). A refused run --pty --replace stops nothing.
func TestPTYNeedsScript(t *testing.T) {
	t.Parallel()
	bin := bgjobBinary(t)
	noScript := t.TempDir()
	entries, err := os.ReadDir("/usr/bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "script" {
			if err := os.Symlink(filepath.Join("/usr/bin", e.Name()), filepath.Join(noScript, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	fake := func(text string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "script"), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	busybox := fake("#!/bin/sh\necho \"script: invalid option -- '${1#-}'\" >&2\necho 'BusyBox v1.36.1 (Debian 1:1.36.1-9) multi-call binary.' >&2\nexit 1\n")
	old := fake("#!/bin/sh\necho 'script from util-linux 2.34'\n")
	// sshd takes the first SetEnv of its config, sshtest's own: a Match
	// block's overrides it.
	cfg := sshConfig(t, sshtest.Start(t, "Match all", "SetEnv SHLVL=1 PATH="+busybox+":/usr/bin:/bin"))
	for _, tc := range []struct {
		name, path string
		ssh        bool
		want       string
	}{
		{"local without script", noScript, false, "the host has no script command: --pty needs script from util-linux 2.35 or later"},
		{"local with busybox's", busybox + ":/usr/bin", false, "the host's script is not util-linux's (script -V: script: invalid option -- 'V'): --pty needs script from util-linux 2.35 or later"},
		{"local with an old one", old + ":/usr/bin", false, "the host's script is too old ('script from util-linux 2.34', without -E): --pty needs script from util-linux 2.35 or later"},
		{"ssh with busybox's", os.Getenv("PATH"), true, "the host's script is not util-linux's (script -V: script: invalid option -- 'V'): --pty needs script from util-linux 2.35 or later"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			args := []string{"--root", root}
			if tc.ssh {
				args = append(args, "--ssh-config", cfg, "-H", "bgjob-test")
			}
			cmd := exec.Command(bin, append(args, "run", "--pty", "--", "true")...)
			cmd.Env = append(os.Environ(), "PATH="+tc.path)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("run --pty: %v, want exit status 1\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			if !strings.HasPrefix(stderr.String(), "bgjob: error: ") || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q, want a bgjob error saying %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing (no job id)", stdout.String())
			}
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Errorf("the root holds %d entries, want none: no job is made", len(left))
			}

			// The check comes first: a --replace that is refused stops
			// nothing.
			run := func(args ...string) (int, string) {
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "PATH="+tc.path)
				out, err := cmd.CombinedOutput()
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode(), string(out)
				}
				if err != nil {
					t.Fatal(err)
				}
				return 0, string(out)
			}
			if code, out := run(append(args, "run", "-q", "-n", "srv", "--", "sleep 60")...); code != 0 {
				t.Fatalf("run -n srv: exit %d: %s", code, out)
			}
			if code, out := run(append(args, "run", "--pty", "--replace", "-n", "srv", "--", "true")...); code != 1 || !strings.Contains(out, tc.want) {
				t.Errorf("run --pty --replace: exit %d, %s; want 1 and %q", code, out, tc.want)
			}
			if code, out := run(append(args, "status", "srv")...); code != 0 || !strings.Contains(out, "running") {
				t.Errorf("status srv after the refused replace: exit %d, %s; want it running", code, out)
			}
			if code, out := run(append(args, "stop", "srv")...); code != 0 {
				t.Errorf("stop srv: exit %d, %s", code, out)
			}
		})
	}
}
