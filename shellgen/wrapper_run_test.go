package shellgen_test

import (
	"os"
	"path/filepath"
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
