package shellgen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// TestWrapperRecordsStatus runs jobs whose environment or argv could
// disturb the wrapper itself, under every shell, and checks that the
// wrapper still records the command's real status.
func TestWrapperRecordsStatus(t *testing.T) {
	tests := []struct {
		name       string
		argv       []string
		script     string // the command when argv is nil
		env        []string
		timeout    time.Duration
		wantCode   int
		wantStatus jobdir.Status
		wantOut    string
	}{
		{
			name:       "environment named like the wrapper's variables",
			argv:       []string{"/bin/sh", "-c", `printf '%s|' "$bg_d" "$bg_rc" "$bg_sh" "$bg_timer"`},
			env:        []string{"bg_d=/nonexistent", "bg_rc=5", "bg_sh=false", "bg_timer=1"},
			wantStatus: jobdir.StatusExited,
			wantOut:    "/nonexistent|5|false|1|",
		},
		{
			name:       "script with environment named like the wrapper's variables",
			script:     `printf '%s|' "$bg_sh" "$bg_d"`,
			env:        []string{"bg_sh=false", "bg_d=/nonexistent"},
			wantStatus: jobdir.StatusExited,
			wantOut:    "false|/nonexistent|",
		},
		{
			name:       "PATH without the tools the wrapper uses",
			argv:       []string{"/bin/sh", "-c", `printf '%s' "$PATH"`},
			env:        []string{"PATH=/nonexistent"},
			wantStatus: jobdir.StatusExited,
			wantOut:    "/nonexistent",
		},
		{
			// The shell is found before the PATH of --env applies: with
			// it, the script failed with 127 (bash: not found).
			name:       "script with a PATH without its shell",
			script:     `printf '%s' "$PATH"`,
			env:        []string{"PATH=/nonexistent"},
			wantStatus: jobdir.StatusExited,
			wantOut:    "/nonexistent",
		},
		{
			name:       "timeout with a PATH without sh",
			argv:       []string{"/bin/sleep", "30"},
			env:        []string{"PATH=/nonexistent"},
			timeout:    200 * time.Millisecond,
			wantCode:   143,
			wantStatus: jobdir.StatusKilled,
		},
		{
			name:       "argv exit",
			argv:       []string{"exit", "3"},
			wantCode:   3,
			wantStatus: jobdir.StatusExited,
		},
		{
			name:       "argv exec",
			argv:       []string{"exec", "/bin/sh", "-c", "exit 4"},
			wantCode:   4,
			wantStatus: jobdir.StatusExited,
		},
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					base := t.TempDir()
					target := shellgen.Target{Root: filepath.Join(base, "root"), Workspace: "w"}
					m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Argv: tt.argv, Env: []string{}}
					m.Command, _ = shellgen.QuoteArgv(tt.argv)
					if tt.argv == nil {
						m.Command = tt.script
					}
					script, err := shellgen.LaunchScript(shellgen.Launch{Target: target, Meta: m, Env: tt.env,
						Timeout: tt.timeout, Grace: 100 * time.Millisecond})
					if err != nil {
						t.Fatal(err)
					}
					runOne(t, &sh, base, nil, script)
					dir := filepath.Join(target.Root, "w", m.ID)
					waitExitCode(t, dir)

					status, err := shellgen.StatusScript(target, []string{m.ID})
					if err != nil {
						t.Fatal(err)
					}
					j := runOne(t, &sh, base, nil, status)
					if j.Status != tt.wantStatus || j.ExitCode == nil || *j.ExitCode != tt.wantCode {
						t.Errorf("job %s with exit code %v, want %s with %d", j.Status, j.ExitCode, tt.wantStatus, tt.wantCode)
					}
					out, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
					if string(out) != tt.wantOut {
						t.Errorf("stdout.log = %q, want %q", out, tt.wantOut)
					}
				})
			}
		})
	}
}

// TestWrapperDuration runs a one-second job under every shell, and under
// busybox sh with busybox's date (which has no %N), and checks that its
// duration, by the host's clock from the wrapper's start to its end (the
// time exit_code was written), is about a second: an end to the second
// made it "0s".
func TestWrapperDuration(t *testing.T) {
	precise := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	whole := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	cases := []struct {
		sh          shell
		busyboxDate bool
	}{{allShells[0], false}, {allShells[1], false}, {allShells[2], false}, {allShells[2], true}}
	for _, c := range cases {
		name := c.sh.name
		if c.busyboxDate {
			name += " with busybox date"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sh := c.sh
			base := t.TempDir()
			var env []string
			want := precise
			if c.busyboxDate {
				// busybox picks its applet from the name it is called by.
				bin := t.TempDir()
				for _, applet := range []string{"sh", "date"} {
					if err := os.Symlink(sh.path(t), filepath.Join(bin, applet)); err != nil {
						t.Fatal(err)
					}
				}
				env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
				want = whole
			}
			target := shellgen.Target{Root: filepath.Join(base, "root"), Workspace: "w"}
			now := time.Now().UTC().Truncate(time.Millisecond)
			m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(now), Workspace: "w", Argv: []string{"sleep", "1"}, Env: []string{}, StartedAt: now}
			m.Command, _ = shellgen.QuoteArgv(m.Argv)
			script, err := shellgen.LaunchScript(shellgen.Launch{Target: target, Meta: m})
			if err != nil {
				t.Fatal(err)
			}
			run := func(script string) jobdir.Job {
				if c.busyboxDate {
					return runOne(t, nil, base, env, script)
				}
				return runOne(t, &sh, base, nil, script)
			}
			run(script)
			dir := filepath.Join(target.Root, "w", m.ID)
			waitExitCode(t, dir)
			// The end's time is when exit_code was written: no ended_at.
			if _, err := os.Stat(filepath.Join(dir, "ended_at")); err == nil {
				t.Errorf("the wrapper wrote ended_at; want none")
			}
			status, err := shellgen.StatusScript(target, []string{m.ID})
			if err != nil {
				t.Fatal(err)
			}
			j := run(status)
			if j.HostStartedAt == nil || !want.MatchString(j.HostStartedAt.UTC().Format(jobdir.EndedAtLayout)) && !c.busyboxDate ||
				c.busyboxDate && j.HostStartedAt.Nanosecond() != 0 {
				t.Errorf("host_started_at = %v, want the host's clock as ended_at has it", j.HostStartedAt)
			}
			if j.EndedAt == nil || !want.MatchString(j.EndedAt.UTC().Format(jobdir.EndedAtLayout)) && !c.busyboxDate ||
				c.busyboxDate && j.EndedAt.Nanosecond() != 0 || j.EndedAt.Nanosecond()%int(time.Millisecond) != 0 {
				t.Errorf("ended_at = %v, want exit_code's time as bg_mtime has it", j.EndedAt)
			}
			d, ok := j.Duration(time.Now())
			if j.Status != jobdir.StatusExited || !ok || d < 999*time.Millisecond || d > 30*time.Second {
				t.Errorf("a one-second job: %s, duration %v (%v), want about a second", j.Status, d, ok)
			}
		})
	}
}

// TestJobsBashReadsNoBashrc: a job's bash does not run the user's
// ~/.bashrc. Debian's bash reads it when SSH_CLIENT is set and its shell
// level is below 2, which is how a job launched over SSH starts (the
// launch's exec leaves SHLVL at 0): its PATH came before the one of
// --env, and its output went into the job's logs.
func TestJobsBashReadsNoBashrc(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("no bash: the test is of a job's bash (.ci/run's machine has it)")
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			base := t.TempDir()
			if err := os.WriteFile(filepath.Join(base, ".bashrc"), []byte("[ -z \"${BGJOB_JOB_ID-}\" ] || echo read-bashrc\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			target := shellgen.Target{Root: filepath.Join(base, "root"), Workspace: "w"}
			m := jobdir.Meta{Version: jobdir.Version, ID: jobdir.NewID(time.Now()), Workspace: "w", Shell: "bash", Env: []string{},
				Command: `printf none`}
			script, err := shellgen.LaunchScript(shellgen.Launch{Target: target, Meta: m, Grace: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + base, "SSH_CLIENT=127.0.0.1 40000 22", "SHLVL=0"}
			runOne(t, &sh, base, env, script)
			dir := filepath.Join(target.Root, "w", m.ID)
			waitExitCode(t, dir)
			out, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
			errs, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
			if string(out) != "none" || len(errs) > 0 {
				t.Errorf("the job's bash read ~/.bashrc: stdout %q, stderr %q; want none and nothing", out, errs)
			}
		})
	}
}
