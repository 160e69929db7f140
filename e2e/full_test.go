package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
)

// TestFullBinary runs bgjob and bgjob-full as `go install ./cmd/...`
// installs them, side by side: bgjob serves this machine itself; it runs
// bgjob-full for an SSH host, bgjob mcp and completion; without
// bgjob-full beside it, it says which file is missing; and bgjob-full
// refuses a bgjob of another version.
func TestFullBinary(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go") // go test puts GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("go not found to build bgjob: %v", err)
	}
	build := func(dir string, flags ...string) {
		t.Helper()
		args := append([]string{"build", "-o", dir + "/"}, flags...)
		cmd := exec.Command(goCmd, append(args, "./cmd/...")...)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	both, alone, other := t.TempDir(), t.TempDir(), t.TempDir()
	build(both)
	build(other, "-ldflags=-X github.com/bgjob/bgjob/internal/cli.version=v0.0.1-other")
	copyFile(t, filepath.Join(both, "bgjob"), filepath.Join(alone, "bgjob"))
	copyFile(t, filepath.Join(both, "bgjob"), filepath.Join(other, "bgjob"))
	root := t.TempDir()
	cfg := sshConfig(t, sshtest.Start(t))

	type result struct {
		code           int
		stdout, stderr string
	}
	var env []string
	run := func(dir, stdin string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "bgjob"), append([]string{"--root", root}, args...)...)
		cmd.Env = append(os.Environ(), "BGJOB_SSH_CONFIG="+cfg, "SSH_AUTH_SOCK=", "BGJOB_HOST=", "BGJOB_VIA=")
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}
	want := func(r result, code int, inStdout, inStderr string) {
		t.Helper()
		if r.code != code || !strings.Contains(r.stdout, inStdout) || !strings.Contains(r.stderr, inStderr) {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, %q in stdout, %q in stderr", r.code, r.stdout, r.stderr, code, inStdout, inStderr)
		}
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"

	t.Run("this machine without bgjob-full", func(t *testing.T) {
		want(run(alone, "", "run", "-q", "-n", "alone", "--wait", "10s", "--", "echo from bgjob alone"), 0, "", "")
		want(run(alone, "", "logs", "alone"), 0, "from bgjob alone", "")
		want(run(alone, "", "status", "alone"), 0, "exit_code:  0", "")
		// --via hosts are bgjob's own too.
		want(run(alone, "", "--via", writeExecInto(t)+" %h --", "-H", "box", "ls"), 0, "alone", "")
		want(run(alone, "", "__complete", "sta"), 0, "status", "")
	})
	t.Run("bgjob-full missing", func(t *testing.T) {
		missing := filepath.Join(alone, "bgjob-full")
		want(run(alone, "", "-H", "bgjob-test", "status", "alone"), 1, "", "host bgjob-test needs "+missing+" beside")
		want(run(alone, initialize, "mcp"), 1, "", "bgjob mcp needs "+missing)
		// Verbs that reach no host need none, whatever -H says.
		env = []string{"BGJOB_HOST=bgjob-test"}
		want(run(alone, "", "version"), 0, "bgjob", "")
		want(run(alone, "", "completion", "bash"), 0, "bash completion", "")
		env = nil
		// Host names are bgjob-full's to complete: none without it.
		if r := run(alone, "", "__complete", "-H", "bgjob-t"); strings.Contains(r.stdout, "bgjob-test") {
			t.Errorf("completed %q without bgjob-full", r.stdout)
		}
	})
	t.Run("bgjob-full beside it", func(t *testing.T) {
		want(run(both, "", "-H", "bgjob-test", "run", "-q", "-n", "over-ssh", "--wait", "20s", "--", "echo from bgjob-full"), 0, "", "")
		want(run(both, "", "-H", "bgjob-test", "logs", "over-ssh"), 0, "from bgjob-full", "")
		want(run(both, initialize, "mcp"), 0, `"serverInfo"`, "")
		want(run(both, "", "__complete", "-H", "bgjob-t"), 0, "bgjob-test", "")
		// A host file is read once, by bgjob-full: stdin too.
		want(run(both, "bgjob-test\n", "-H", "@/dev/stdin", "logs", "over-ssh"), 0, "from bgjob-full", "")
		// A variable inherited from elsewhere is not a request handed over.
		env = []string{"BGJOB_FULL_FOR=1 stale"}
		want(run(both, "", "-H", "bgjob-test", "logs", "over-ssh"), 0, "from bgjob-full", "")
		env = nil
	})
	t.Run("bgjob-full unusable", func(t *testing.T) {
		// A bgjob where bgjob-full should be would run itself for ever.
		loop := t.TempDir()
		copyFile(t, filepath.Join(both, "bgjob"), filepath.Join(loop, "bgjob"))
		if err := os.Symlink("bgjob", filepath.Join(loop, "bgjob-full")); err != nil {
			t.Fatal(err)
		}
		want(run(loop, "", "-H", "bgjob-test", "ls"), 1, "", filepath.Join(loop, "bgjob-full")+" is not bgjob-full")
		want(run(loop, "", "-H", "bgjob-test", "ls", "--json"), 1, `"error":`, "is not bgjob-full")
		noexec := t.TempDir()
		copyFile(t, filepath.Join(both, "bgjob"), filepath.Join(noexec, "bgjob"))
		if err := os.WriteFile(filepath.Join(noexec, "bgjob-full"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		want(run(noexec, initialize, "mcp"), 1, "", "bgjob mcp needs "+filepath.Join(noexec, "bgjob-full")+": permission denied")
	})
	t.Run("bgjob-full of another version", func(t *testing.T) {
		want(run(other, initialize, "mcp"), 1, "", "install both from one version")
		want(run(other, "", "-H", "bgjob-test", "status", "--json", "x"), 1, `"error":`, "install both from one version")
	})
}

// copyFile copies the executable from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
