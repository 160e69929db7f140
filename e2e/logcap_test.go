package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/sshtest"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestLogCapNeedsFallocate: a host whose fallocate cannot punch holes
// (busybox's has no -p) or that has none cannot enforce --max-log-size:
// run refuses it with an error that names what is missing and makes no
// job (before, a 3 MB write with a 16K cap kept all 3 MB and meta.json
// claimed the cap), locally and over SSH (the test sshd gives its
// sessions a PATH whose fallocate is busybox's). A refused run
// --max-log-size --replace stops nothing.
func TestLogCapNeedsFallocate(t *testing.T) {
	t.Parallel()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		testneed.Missing(t, "busybox (.ci/run installs it)")
	}
	bin := bgjobBinary(t)
	noFallocate := t.TempDir()
	entries, err := os.ReadDir("/usr/bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "fallocate" {
			if err := os.Symlink(filepath.Join("/usr/bin", e.Name()), filepath.Join(noFallocate, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	bbFallocate := t.TempDir()
	if err := os.Symlink(busybox, filepath.Join(bbFallocate, "fallocate")); err != nil {
		t.Fatal(err)
	}
	cfg := sshConfig(t, sshtest.Start(t, "Match all", "SetEnv SHLVL=1 PATH="+bbFallocate+":/usr/bin:/bin"))
	const need = "--max-log-size needs fallocate -p (util-linux) to drop the logs' old bytes"
	for _, tc := range []struct {
		name, path string
		ssh        bool
		want       string
	}{
		{"local without fallocate", noFallocate, false, "the host has no fallocate command: " + need},
		{"local with busybox's", bbFallocate + ":/usr/bin", false, "(fallocate: invalid option -- 'p'): " + need},
		{"ssh with busybox's", os.Getenv("PATH"), true, "(fallocate: invalid option -- 'p'): " + need},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			t.Cleanup(func() { killAll(root) })
			args := []string{"--root", root}
			if tc.ssh {
				args = append(args, "--ssh-config", cfg, "-H", "bgjob-test")
			}
			run := func(args ...string) (int, string, string) {
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "PATH="+tc.path)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode(), stdout.String(), stderr.String()
				}
				if err != nil {
					t.Fatal(err)
				}
				return 0, stdout.String(), stderr.String()
			}
			code, out, errs := run(append(args, "run", "--max-log-size", "16K", "--", "head -c 3000000 /dev/zero")...)
			if code != 1 || !strings.HasPrefix(errs, "bgjob: error: ") || !strings.Contains(errs, tc.want) {
				t.Errorf("run --max-log-size: exit %d, stderr %q; want 1 and a bgjob error saying %q", code, errs, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing (no job id)", out)
			}
			if jobs, _ := os.ReadDir(filepath.Join(root, "default")); len(jobs) != 0 {
				t.Errorf("the workspace holds %d entries, want none: no job is made", len(jobs))
			}

			if code, out, errs := run(append(args, "run", "-q", "-n", "srv", "--", "sleep 60")...); code != 0 {
				t.Fatalf("run -n srv: exit %d: %s%s", code, out, errs)
			}
			if code, _, errs := run(append(args, "run", "--max-log-size", "16K", "--replace", "-n", "srv", "--", "true")...); code != 1 || !strings.Contains(errs, tc.want) {
				t.Errorf("run --max-log-size --replace: exit %d, %s; want 1 and %q", code, errs, tc.want)
			}
			if code, out, errs := run(append(args, "status", "srv")...); code != 0 || !strings.Contains(out, "running") {
				t.Errorf("status srv after the refused replace: exit %d, %s%s; want it running", code, out, errs)
			}
			if code, out, errs := run(append(args, "stop", "srv")...); code != 0 {
				t.Errorf("stop srv: exit %d, %s%s", code, out, errs)
			}
		})
	}
}
