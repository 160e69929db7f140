package shellgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// TestUlimitShells: under each shell as /bin/sh, the wrapper sets a job's
// limits (Docker's bytes in the shell's units; nproc with dash's -p)
// before the command starts, and a limit the shell cannot set ends the job
// before it: not_run names the limit and why, exit_code is 125, and the
// command never ran.
func TestUlimitShells(t *testing.T) {
	limits := []jobdir.Ulimit{
		{Name: "nofile", Soft: 64, Hard: 128},
		{Name: "nproc", Soft: 500, Hard: 500},
		{Name: "fsize", Soft: 1 << 20, Hard: 1 << 20},
		{Name: "cpu", Soft: 5, Hard: jobdir.Unlimited},
	}
	// The command's sh is the shell too: -f counts 512-byte blocks, nproc
	// is -u or, in dash, -p.
	show := `ulimit -Sn; ulimit -Hn; ulimit -u 2>/dev/null || ulimit -p; ulimit -f; ulimit -St; ulimit -Ht`
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			run := func(limits []jobdir.Ulimit, argv ...string) string {
				m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Env: []string{}, Argv: argv, Ulimits: limits}
				m.Command, _ = shellgen.QuoteArgv(m.Argv)
				script, err := shellgen.LaunchScript(shellgen.Launch{Target: shellgen.Target{Root: root, Workspace: "w"}, Meta: m})
				if err != nil {
					t.Fatal(err)
				}
				cmd := sh.asBinSh(t, "-c", script)
				cmd.Dir = t.TempDir()
				if len(cmdJobs(t, cmd)) != 1 {
					t.Fatal("the launch reported no job")
				}
				return filepath.Join(root, "w", m.ID)
			}
			dir := run(limits, "sh", "-c", show)
			if code := strings.TrimSpace(waitExitCode(t, dir)); code != "0" {
				t.Fatalf("exit_code %q, want 0", code)
			}
			out, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
			if want := "64\n128\n500\n2048\n5\nunlimited\n"; string(out) != want {
				t.Errorf("the job saw limits %q, want %q", out, want)
			}

			ran := filepath.Join(t.TempDir(), "ran")
			dir = run([]jobdir.Ulimit{{Name: "nofile", Soft: 1 << 32, Hard: 1 << 32}}, "touch", ran)
			if code := strings.TrimSpace(waitExitCode(t, dir)); code != "125" {
				t.Errorf("exit_code %q, want 125", code)
			}
			why, _ := os.ReadFile(filepath.Join(dir, "not_run"))
			if !strings.HasPrefix(string(why), "ulimit nofile=4294967296:4294967296: cannot be set on this host by its sh (ulimit -n: ") {
				t.Errorf("not_run %q, want the limit and why", why)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the command ran without its limit")
			}
		})
	}
}
