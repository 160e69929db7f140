package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
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
