package shellgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bgjob/bgjob/internal/testneed"
)

// shell is one of the shells every generated script must run under.
type shell struct {
	name string
	argv []string // how to start it, e.g. busybox sh
}

var allShells = []shell{
	{"bash", []string{"bash"}},
	{"dash", []string{"dash"}},
	{"busybox", []string{"busybox", "sh"}},
}

// path returns the shell's executable, skipping the test when the host
// genuinely lacks it.
func (s shell) path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath(s.argv[0])
	if err != nil {
		testneed.Missing(t, "%s: %v", s.argv[0], err)
	}
	return p
}

// command returns a command that runs the shell with args.
func (s shell) command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(s.path(t), append(s.argv[1:], args...)...)
}

// present gives cmd a stdin that stays open until the test ends: the
// caller is there, as the runtimes' callers are while they wait for a
// script (a watch script ends itself and its group when stdin closes).
func present(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	cmd.Stdin = r
}

// asSh returns a directory holding an "sh" that is this shell, to put
// first in PATH so that the scripts' own "sh" (the wrapper, sh -c) is it
// too. busybox picks its applet from the name it is called by.
func (s shell) asSh(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(s.path(t), filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkSyntax fails the test unless script parses with sh -n under every
// shell.
func checkSyntax(t *testing.T, script string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sh := range allShells {
		cmd := sh.command(t, "-n", f)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s -n: %v\n%s", sh.name, err, stderr.Bytes())
		}
	}
}

// asBinSh returns a command that runs the shell with args in a private
// mount namespace (unshare -m) where the shell is also bound over the
// file /bin/sh points to, so that the wrapper a launch script starts
// (/bin/sh job.sh) and every sh it runs are the shell too, as on a host
// whose sh it is. The namespace lives on with the processes started in
// it. It needs root.
func (s shell) asBinSh(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		testneed.Missing(t, "root, for a private mount namespace (unshare -m)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		testneed.Missing(t, "unshare (util-linux): %v", err)
	}
	binSh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	script := `mount --bind "$1" "$2" && shift 2 && exec "$@"`
	return exec.Command(unshare, append([]string{"-m", "/bin/sh", "-c", script, "sh", s.path(t), binSh, s.path(t)}, append(s.argv[1:], args...)...)...)
}
