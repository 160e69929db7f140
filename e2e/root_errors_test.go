package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestUnwritableRoot: a root that cannot be made is refused with the
// reason, and with the host's name on a host ("bgjob: error: HOST:
// reason", as the README says), locally and over SSH.
func TestUnwritableRoot(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := file + "/r"
	reason := "cannot create root " + root + ": " + file + " is not a directory: unusable root\n"
	t.Run("local", func(t *testing.T) {
		code, _, errs := bgjob(context.Background(), "--root", root, "run", "--", "true")
		if want := "bgjob: error: " + reason; code != 1 || errs != want {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
		}
	})
	t.Run("ssh", func(t *testing.T) {
		_, _, g := sshJobs(t)
		g[1] = root
		code, _, errs := bgjob(context.Background(), append(g, "run", "--", "true")...)
		if want := "bgjob: error: bgjob-test: " + reason; code != 1 || errs != want {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
		}
	})
	t.Run("permission denied", func(t *testing.T) {
		// As nobody, in a directory of root's: the binary is copied
		// where nobody may run it.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Fatal("setpriv not installed (util-linux)")
		}
		if os.Geteuid() != 0 {
			t.Fatal("needs root, to run bgjob as nobody")
		}
		dir := filepath.Join(t.TempDir(), "d")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// t.TempDir's two directories are private.
		for _, d := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(dir, "bgjob")
		copyExe(t, bin)
		root := dir + "/r"
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "--root", root, "run", "--", "true")
		cmd.Env = append(os.Environ(), "BGJOB_HOST=", "HOME=/")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		want := "bgjob: error: cannot create root " + root + ": permission denied on " + dir + ": unusable root\n"
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || stderr.String() != want {
			t.Errorf("%v, stderr %q; want exit 1 and %q", err, stderr.String(), want)
		}
	})
}

// copyExe copies the test binary, which runs as bgjob under that name, to
// bin, mode 0755.
func copyExe(t *testing.T, bin string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRootReasons: a root that cannot be made where the user may write,
// as far as the permission bits say (as root, in /proc or on a read-only
// file system), is refused with the system's reason, as mkdir gives it,
// locally (Go) and over SSH (the script). Before, both said "cannot create
// root R: unusable root" and no more.
func TestRootReasons(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to mount a read-only file system")
	}
	ro := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro", "tmpfs", ro).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", ro).Run() })
	_, _, g := sshJobs(t)
	for _, tc := range []struct{ name, root, reason string }{
		{"proc", "/proc/bgjob-nope/r", "no such file or directory on /proc"},
		{"read-only", ro + "/r", "read-only file system on " + ro},
	} {
		want := "cannot create root " + tc.root + ": " + tc.reason + ": unusable root\n"
		t.Run(tc.name+"/local", func(t *testing.T) {
			code, _, errs := bgjob(context.Background(), "--root", tc.root, "run", "--", "true")
			if want := "bgjob: error: " + want; code != 1 || errs != want {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
			}
		})
		t.Run(tc.name+"/ssh", func(t *testing.T) {
			g := append([]string(nil), g...)
			g[1] = tc.root
			code, _, errs := bgjob(context.Background(), append(g, "run", "--", "true")...)
			if want := "bgjob: error: bgjob-test: " + want; code != 1 || errs != want {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
			}
		})
	}
}

// TestJobDirReasons: a workspace or a job directory that cannot be made
// on a root that can no longer be written says the system's reason, as
// the root does, in Go on this machine and in the script over SSH.
func TestJobDirReasons(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to mount a read-only file system")
	}
	_, _, g := sshJobs(t)
	for _, tc := range []struct {
		name  string
		flags []string
		label string
	}{{"local", nil, ""}, {"ssh", g, "bgjob-test: "}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", fs).CombinedOutput(); err != nil {
				t.Fatalf("mount: %v: %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", fs).Run() })
			root := fs + "/r"
			flags := append([]string(nil), tc.flags...)
			if flags == nil {
				flags = []string{"--root", root}
			} else {
				flags[1] = root
			}
			if code, _, errs := bgjob(context.Background(), append(flags, "run", "--wait", "30s", "--", "true")...); code != 0 {
				t.Fatalf("run on the writable root: exit %d: %s", code, errs)
			}
			if out, err := exec.Command("mount", "-o", "remount,ro", fs).CombinedOutput(); err != nil {
				t.Fatalf("remount: %v: %s", err, out)
			}
			for _, c := range []struct{ ws, want string }{
				{"other", "cannot create workspace directory " + regexp.QuoteMeta(root) + "/other: read-only file system"},
				{"default", "cannot create job directory " + regexp.QuoteMeta(root) + "/default/[0-9T-]+[0-9a-z]+: read-only file system"},
			} {
				code, _, errs := bgjob(context.Background(), append(flags, "-w", c.ws, "run", "--", "true")...)
				if re := regexp.MustCompile("^bgjob: error: " + tc.label + c.want + ": "); code != 1 || !re.MatchString(errs) {
					t.Errorf("run -w %s on a read-only root: exit %d, stderr %q; want 1 and %s", c.ws, code, errs, re)
				}
			}
		})
	}
}
