package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
	"github.com/bgjob/bgjob/shellgen"
)

// TestMCPBigScript: scripts and --env values too long for one argument of
// "sh -c" (the launch script then reaches the host on stdin), locally and
// over SSH. A script over the kernel's 128 KiB limit on one argument runs
// (from a file in the job directory; it used to end "exited 126:
// Argument list too long"); every big launch keeps the caller's umask (the
// bootstrap used to run it with 077); an --env value over the limit, which
// no program can receive, is refused and makes no job.
func TestMCPBigScript(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			start := func(args map[string]any) toolJob {
				t.Helper()
				args["wait_sec"] = 60
				// The session's end need not look at the ended jobs again
				// (reading a long meta.json takes dash's read a byte at a
				// time).
				args["keep"] = true
				var j toolJob
				ts.call("job_start", tg.args(args), &j)
				if j.Status != jobdir.StatusExited {
					t.Fatalf("job_start: %s, want exited", j.Status)
				}
				return j
			}
			small := start(map[string]any{"command": "umask"})
			umask := strings.TrimSpace(small.Output)
			if code(small) != 0 || umask == "0077" || len(umask) != 4 {
				t.Fatalf("umask of a small script: %q (exit %d): want the caller's, not 0077, or the test proves nothing", umask, code(small))
			}
			// Quotes, a backslash and a $ in the script, and a filler
			// comment past 128 KiB.
			script := `printf '%s|' "it's" '$x' "a\\b"; echo; umask; echo "$#"` + "\n# " + strings.Repeat(`x'"\ `, 35_000) + "\n"
			for _, tc := range []struct {
				name string
				args map[string]any
				want string
			}{
				{"100 KB script", map[string]any{"command": "umask" + strings.Repeat(" ", 100_000)}, umask + "\n"},
				{"110 KB env value", map[string]any{"command": `umask; printf '%s\n' "${#BIG}"`, "env": map[string]string{"BIG": strings.Repeat("v", 110_000)}}, umask + "\n110000\n"},
				{"140 KB script", map[string]any{"command": script}, `it's|$x|a\b|` + "\n" + umask + "\n0\n"},
				// Under 100 KiB as a script, over 128 KiB as the quoted
				// command an SSH server runs.
				{"env value of quotes", map[string]any{"command": `printf '%s\n' "${#Q}"`, "env": map[string]string{"Q": strings.Repeat("'", 6000)}}, "6000\n"},
			} {
				j := start(tc.args)
				if code(j) != 0 || j.Output != tc.want {
					t.Errorf("%s: exit %d, output %q; want 0 and %q", tc.name, code(j), j.Output, tc.want)
				}
			}

			var before toolJobs
			ts.call("job_list", tg.args(map[string]any{}), &before)
			huge := strings.Repeat("v", 140_000)
			res := ts.callRaw(t.Context(), "job_start", tg.args(map[string]any{"command": "true", "env": map[string]string{"HUGE": huge}}))
			if txt := resultText(res); !res.IsError || !strings.Contains(txt, "HUGE") || !strings.Contains(txt, strconv.Itoa(len("HUGE=")+len(huge))+" bytes") || !strings.Contains(txt, "128 KiB") {
				t.Errorf("job_start with a 140 KB env value: error %v, %q; want a refusal naming the variable, its size and the limit", res.IsError, txt)
			}
			var after toolJobs
			ts.call("job_list", tg.args(map[string]any{}), &after)
			if len(after.Jobs) != len(before.Jobs) {
				t.Errorf("the refused job_start made a job: %d jobs before, %d after", len(before.Jobs), len(after.Jobs))
			}
		})
	}
}

// TestRunAtTheArgLimit: an argv word and an --env entry of exactly
// shellgen.MaxArg bytes reach the command; one byte more is refused at
// run, wrapping ErrUsage and shellgen.ErrTooLong, and makes no job.
func TestRunAtTheArgLimit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c, err := bg.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	word := strings.Repeat("w", shellgen.MaxArg)
	env := "A=" + strings.Repeat("e", shellgen.MaxArg-2)
	j, err := c.Run(ctx, bg.Spec{Argv: []string{"sh", "-c", `printf '%s %s\n' "${#1}" "${#A}"`, "sh", word}, Env: []string{env}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{j.ID}, bg.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := c.Logs(ctx, j.ID, bg.LogOptions{All: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d %d\n", shellgen.MaxArg, shellgen.MaxArg-2); out.String() != want {
		t.Errorf("a job with an argument and an env entry of %d bytes wrote %.200q, want %q", shellgen.MaxArg, out.String(), want)
	}
	for name, s := range map[string]bg.Spec{
		"argv word": {Argv: []string{"echo", word + "w"}},
		"env entry": {Argv: []string{"true"}, Env: []string{env + "e"}},
	} {
		if _, err := c.Run(ctx, s); !errors.Is(err, bg.ErrUsage) || !errors.Is(err, shellgen.ErrTooLong) {
			t.Errorf("run with an %s of %d bytes: %v, want a usage error wrapping ErrTooLong", name, shellgen.MaxArg+1, err)
		}
	}
	if page, err := c.List(ctx, bg.ListOptions{}); err != nil || len(page.Jobs) != 1 {
		t.Errorf("%d jobs after the refused runs (%v), want the one that ran", len(page.Jobs), err)
	}
}
