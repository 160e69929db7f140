package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestShells runs the whole local suite again with /bin/sh being bash, then
// busybox sh, instead of dash: in a private mount namespace, the shell is
// bound over the file /bin/sh points to, so every script bgjob runs and
// every wrapper it starts uses it, as on a host whose sh is that shell.
//
// What it tests is the shell scripts, not bgjob's Go code (TestLocal
// runs that under the race detector): it runs a test binary built
// without the race detector, which runs each of the suite's hundreds of
// bgjob commands in a third of the CPU time.
func TestShells(t *testing.T) {
	if os.Getenv("BGJOB_E2E_SH") != "" {
		t.Skip("already running under another /bin/sh")
	}
	if os.Geteuid() != 0 {
		testneed.Missing(t, "root, for a private mount namespace (unshare -m)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) not found: %v", err)
	}
	target, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	exe := plainTestBinary(t)
	for _, sh := range []string{"bash", "busybox"} {
		t.Run(sh, func(t *testing.T) {
			t.Parallel()
			script := `mount --bind "$1" "$2" && exec "$3" -test.run '^TestLocal$' -test.count=1`
			cmd := exec.Command(unshare, "-m", "/bin/sh", "-c", script, "sh", shellBinary(t, sh), target, exe)
			cmd.Env = append(os.Environ(), "BGJOB_E2E_SH="+sh)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the local suite under %s as /bin/sh failed: %v\n%s", sh, err, tail(string(out), 60))
			}
			if !strings.Contains(string(out), "PASS") {
				t.Fatalf("no PASS from the local suite under %s:\n%s", sh, tail(string(out), 30))
			}
		})
	}
}

// plainTestBinary returns this package's test binary built without the
// race detector: this one if it is, else one built with go test -c.
func plainTestBinary(t *testing.T) string {
	if !raceBuild {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	goCmd, err := exec.LookPath("go") // go test puts GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("go not found to build the test binary without -race: %v", err)
	}
	exe := filepath.Join(t.TempDir(), "e2e.test")
	if out, err := exec.Command(goCmd, "test", "-c", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	return exe
}

// shellBinary returns the file to bind over /bin/sh for sh.
func shellBinary(t *testing.T, sh string) string {
	path, err := exec.LookPath(sh)
	if err != nil {
		t.Fatalf("%s not found: %v", sh, err)
	}
	return path
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
