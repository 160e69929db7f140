package mcp_test

import (
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// started is job_start's result with ready_output.
type started struct {
	job
	Ready    *bool  `json:"ready"`
	Line     string `json:"line"`
	TimedOut *bool  `json:"timed_out"`
}

// job_start with ready_output has three outcomes: ready (the line, the
// output so far, the job running, its ready_at recorded for job_list),
// the job ended first (its status, exit code and last lines), and the
// timeout (the job keeps running); the text says which. Without
// ready_output the result has no readiness fields.
func TestStartReadyOutcomes(t *testing.T) {
	cs := serve(t, mcp.Options{})
	for _, tc := range []struct {
		name, cmd       string
		timeout         float64
		ready, timedOut bool
		status          jobdir.Status
		exitCode        int
		line, output    string
		says            string
	}{
		{name: "ready", cmd: `echo starting; sleep 0.2; echo "Listening on :3000"; sleep 60`, timeout: 30,
			ready: true, status: jobdir.StatusRunning, exitCode: -1, line: "Listening on :3000", output: "starting\nListening on :3000\n", says: "is ready"},
		{name: "ended first", cmd: `i=0; while [ $i -lt 30 ]; do echo "line $i"; i=$((i+1)); done; echo "port 3000 in use" >&2; exit 4`, timeout: 30,
			status: jobdir.StatusExited, exitCode: 4, output: "line 29\n--- stderr ---\nport 3000 in use\n", says: "exited (exit code 4) before a line matched"},
		{name: "timed out", cmd: `echo compiling; sleep 60`, timeout: 1,
			timedOut: true, status: jobdir.StatusRunning, exitCode: -1, output: "compiling\n", says: "printed no line matching"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st started
			res := call(t, cs, "job_start", map[string]any{"command": tc.cmd, "ready_output": "Listening on", "ready_timeout_sec": tc.timeout}, &st)
			if st.Ready == nil || st.TimedOut == nil || *st.Ready != tc.ready || *st.TimedOut != tc.timedOut {
				t.Fatalf("job_start: ready %v, timed_out %v; want %v, %v", st.Ready, st.TimedOut, tc.ready, tc.timedOut)
			}
			if st.Status != tc.status || exitCode(st.job) != tc.exitCode || st.Line != tc.line {
				t.Errorf("job_start: %s, exit code %d, line %q; want %s, %d, %q", st.Status, exitCode(st.job), st.Line, tc.status, tc.exitCode, tc.line)
			}
			if !strings.HasSuffix(st.Output, tc.output) || strings.Contains(st.Output, "line 9\n") {
				t.Errorf("output %q, want it to end %q (at most the last 20 lines of a log)", st.Output, tc.output)
			}
			if !strings.Contains(text(res), tc.says) {
				t.Errorf("text %q does not say %q", text(res), tc.says)
			}
		})
	}
	var plain map[string]any
	call(t, cs, "job_start", map[string]any{"command": "echo hi"}, &plain)
	for _, k := range []string{"ready", "timed_out", "line"} {
		if _, ok := plain[k]; ok {
			t.Errorf("job_start without ready_output: %s in %v", k, plain)
		}
	}
}

// job_start refuses, before it starts a job, what ready_output cannot be
// given with, and a pattern that grep -E reads otherwise than RE2.
func TestStartReadyRefused(t *testing.T) {
	cs := serve(t, mcp.Options{})
	for _, tc := range []struct {
		args map[string]any
		says string
	}{
		{map[string]any{"command": "true", "ready_output": `\d+`}, `\d is RE2 or Perl syntax`},
		{map[string]any{"command": "true", "ready_timeout_sec": 1}, "ready_timeout_sec goes with ready_output"},
		{map[string]any{"command": "true", "ready_output": "x", "ready_timeout_sec": 0}, "must be positive"},
	} {
		res := callRaw(t, cs, "job_start", tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.says) {
			t.Errorf("job_start %v: %q, want an error saying %q", tc.args, text(res), tc.says)
		}
	}
	var list struct{ Jobs []job }
	call(t, cs, "job_list", map[string]any{}, &list)
	if len(list.Jobs) != 0 {
		t.Errorf("refused starts left jobs: %+v", list.Jobs)
	}
}

// job_start's ready_output over SSH: the line, or the job's end first
// with its exit code.
func TestStartReadyOverSSH(t *testing.T) {
	_, _, dial, _ := sshHost(t)
	cs := serve(t, mcp.Options{Dial: dial, AllowHosts: []string{"bgjob-*"}})
	var st started
	call(t, cs, "job_start", map[string]any{"command": `sleep 0.2; echo "Listening on :3000"; sleep 60`, "ready_output": "^Listening on", "host": "bgjob-test"}, &st)
	if st.Ready == nil || !*st.Ready || st.Line != "Listening on :3000" || st.Status != jobdir.StatusRunning || st.Host != "bgjob-test" {
		t.Errorf("job_start over SSH: %+v, ready %v", st, st.Ready)
	}
	var failed started
	call(t, cs, "job_start", map[string]any{"command": `echo "port in use" >&2; exit 4`, "ready_output": "^Listening on", "host": "bgjob-test"}, &failed)
	if failed.Ready == nil || *failed.Ready || *failed.TimedOut || failed.Status != jobdir.StatusExited || exitCode(failed.job) != 4 || !strings.Contains(failed.Output, "port in use") {
		t.Errorf("job_start over SSH of a job that fails: %+v", failed)
	}
}
