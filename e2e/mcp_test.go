package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/jobdir"
)

// toolServer is `bgjob mcp` run as its own process, spoken to over its
// stdin and stdout by the MCP SDK's client, as an agent harness does.
type toolServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	cs     *sdk.ClientSession
	stderr *syncBuffer
	closed bool

	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
}

// mcpExitGrace is how long a client closing a bgjob mcp it started waits
// for the server to stop its jobs and exit before it signals it: the
// SDK's 5 s were too short on a loaded machine, where the server was
// killed in the middle of its stops.
const mcpExitGrace = time.Minute

// syncBuffer is a buffer that the server's stderr copier and the test may
// use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startToolServer starts `bgjob mcp ARGS...` and connects to it. The
// session is closed (stdin closes: the server stops its jobs and exits)
// when the test ends, unless the test closed it.
func startToolServer(t *testing.T, args ...string) *toolServer {
	t.Helper()
	ts := &toolServer{t: t, stderr: &syncBuffer{}}
	ts.cmd = exec.Command(bgjobBinary(t), append([]string{"mcp"}, args...)...)
	ts.cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=", "BGJOB_HOST=", "BGJOB_WORKSPACE=")
	ts.cmd.Stderr = ts.stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.progress = append(ts.progress, req.Params)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: ts.cmd, TerminateDuration: mcpExitGrace}, nil)
	if err != nil {
		t.Fatalf("connecting to bgjob mcp: %v; stderr: %s", err, ts.stderr)
	}
	ts.cs = cs
	t.Cleanup(func() {
		if !ts.closed {
			ts.close()
		}
	})
	return ts
}

// close closes the session (the server's stdin) and checks that the
// server exited 0 without being signalled.
func (ts *toolServer) close() {
	ts.t.Helper()
	ts.closed = true
	ts.cs.Close()
	if st := ts.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		ts.t.Errorf("bgjob mcp after stdin closed: %v; stderr: %s", st, ts.stderr)
	}
}

// call calls a tool that must succeed and decodes its structured content
// into out; it returns the result's text.
func (ts *toolServer) call(name string, args map[string]any, out any) string {
	ts.t.Helper()
	res := ts.callRaw(context.Background(), name, args)
	if res.IsError {
		ts.t.Fatalf("%s(%v): tool error: %s", name, args, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		ts.t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		ts.t.Fatalf("%s: decoding %s: %v", name, b, err)
	}
	return resultText(res)
}

func (ts *toolServer) callRaw(ctx context.Context, name string, args map[string]any) *sdk.CallToolResult {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := ts.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		ts.t.Fatalf("%s(%v): %v; server stderr: %s", name, args, err, ts.stderr)
	}
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolJob is what the tools return about a job, all fields together.
type toolJob struct {
	ID       string        `json:"id"`
	Host     string        `json:"host"`
	Status   jobdir.Status `json:"status"`
	ExitCode *int          `json:"exit_code"`
	PID      int           `json:"pid"`
	Output   string        `json:"output"`
	Text     string        `json:"text"`
	Tail     string        `json:"tail"`
	Trunc    bool          `json:"truncated"`
	Next     *int64        `json:"next_offset"`
}

type toolWait struct {
	Jobs      []toolJob `json:"jobs"`
	Matched   string    `json:"matched"`
	MatchedID string    `json:"matched_id"`
	TimedOut  bool      `json:"timed_out"`
}

type toolJobs struct {
	Jobs []toolJob `json:"jobs"`
}

func code(j toolJob) int {
	if j.ExitCode == nil {
		return -1
	}
	return *j.ExitCode
}

// mcpTarget is where the tools run jobs: the server's flags and the host
// argument of each call.
type mcpTarget struct {
	name  string
	flags []string
	host  string
}

// mcpTargets returns a server on this machine and one that runs the jobs
// on the test sshd through each call's host, each with a fresh root.
func mcpTargets(t *testing.T) []mcpTarget {
	t.Helper()
	var targets []mcpTarget
	for _, tg := range localAndSSH(t) {
		mt := mcpTarget{name: tg.name}
		for i := 0; i < len(tg.flags); i++ {
			if tg.flags[i] == "-H" {
				mt.host = tg.flags[i+1]
				i++
				continue
			}
			mt.flags = append(mt.flags, tg.flags[i])
		}
		targets = append(targets, mt)
	}
	return targets
}

// args adds the target's host to a call's arguments.
func (tg mcpTarget) args(a map[string]any) map[string]any {
	if tg.host != "" {
		a["host"] = tg.host
	}
	return a
}

// The dev-server workflow: start a server that prints "Listening on" after
// a while, wait for that line, read only new output (nothing twice), make
// a request, read the new line it logged, stop the server.
func TestMCPDevServer(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			dev := `echo booting; sleep 1; echo "Listening on http://127.0.0.1:8080"; while read -r path; do echo "GET $path 200"; done`
			var st toolJob
			ts.call("job_start", tg.args(map[string]any{"command": dev, "name": "web", "stdin": true, "wait_sec": 0}), &st)
			if st.Status != jobdir.StatusRunning || st.PID == 0 || st.Host != tg.host {
				t.Fatalf("job_start: %+v, want a running job on %q with a pid", st, tg.host)
			}
			read := st.Output
			var w toolWait
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{"web"}, "until_output": "Listening on", "timeout_sec": 60}), &w)
			if w.Matched != "Listening on http://127.0.0.1:8080" || w.MatchedID != st.ID || w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusRunning {
				t.Fatalf("job_wait until_output: %+v", w)
			}
			var o toolJob
			ts.call("job_output", tg.args(map[string]any{"id": "web"}), &o)
			read += o.Text
			if want := "booting\nListening on http://127.0.0.1:8080\n"; read != want {
				t.Fatalf("job_start's output and the first job_output gave %q, want %q", read, want)
			}
			for i := range 2 {
				txt := ts.call("job_output", tg.args(map[string]any{"id": st.ID}), &o)
				if o.Text != "" || !strings.Contains(txt, "no new output") {
					t.Fatalf("job_output #%d with nothing new: %q (text %q)", i+2, o.Text, txt)
				}
			}
			var sent toolJob
			ts.call("job_send", tg.args(map[string]any{"id": st.ID, "data": "/health\n"}), &sent)
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}, "until_output": "^GET /health", "timeout_sec": 60}), &w)
			ts.call("job_output", tg.args(map[string]any{"id": st.ID}), &o)
			if o.Text != "GET /health 200\n" {
				t.Errorf("job_output after a request: %q, want only the new line", o.Text)
			}
			var stopped toolJobs
			ts.call("job_stop", tg.args(map[string]any{"ids": []string{st.ID}}), &stopped)
			if len(stopped.Jobs) != 1 || stopped.Jobs[0].Status != jobdir.StatusKilled || code(stopped.Jobs[0]) != 143 {
				t.Fatalf("job_stop: %+v, want killed with exit code 143", stopped.Jobs)
			}
			var running toolJobs
			ts.call("job_list", tg.args(map[string]any{"status": "running"}), &running)
			if len(running.Jobs) != 0 {
				t.Errorf("running after job_stop: %+v", running.Jobs)
			}
			res := ts.callRaw(context.Background(), "job_output", tg.args(map[string]any{"id": "nosuchjob"}))
			if want := "no job nosuchjob in workspace default on "; !res.IsError || !strings.HasPrefix(resultText(res), want) || !strings.HasSuffix(resultText(res), "; job_list shows the jobs") {
				t.Errorf("unknown id: %q (error %v), want %q…; job_list shows the jobs", resultText(res), res.IsError, want)
			}
		})
	}
}

// bgjob mcp --via: a tool's host is reached through the command, and a
// job there runs, ends with its own exit code and gives its output.
func TestMCPVia(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ts := startToolServer(t, "--via", writeExecInto(t)+" %h --", "--root", root)
	var st toolJob
	ts.call("job_start", map[string]any{"host": "box", "command": "echo far; exit 3", "wait_sec": 60}, &st)
	if st.Host != "box" || st.Status != jobdir.StatusExited || code(st) != 3 {
		t.Fatalf("job_start through --via: %+v, want exited 3 on box", st)
	}
	var o toolJob
	ts.call("job_output", map[string]any{"host": "box", "id": st.ID}, &o)
	if got := st.Output + o.Text; got != "far\n" {
		t.Errorf("job_start's and job_output's output through --via: %q, want far", got)
	}
}

// The build workflow: start, wait with a timeout that expires, wait again
// until it ends, read the tail and the exit code; and a short command
// whose status comes back from job_start itself.
func TestMCPBuild(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			build := `for i in 1 2 3; do echo "compiling $i"; sleep 0.5; done; echo "main.c:3: error: x undeclared" >&2; exit 2`
			var st toolJob
			ts.call("job_start", tg.args(map[string]any{"command": build, "wait_sec": 0}), &st)
			var w toolWait
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}, "timeout_sec": 0.2}), &w)
			if !w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusRunning {
				t.Fatalf("job_wait with a short timeout: %+v, want timed_out and the job running", w)
			}
			txt := ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}, "timeout_sec": 120}), &w)
			if w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited || code(w.Jobs[0]) != 2 {
				t.Fatalf("job_wait: %+v, want exited with exit code 2", w)
			}
			for _, want := range []string{"compiling 3\n", "main.c:3: error: x undeclared\n"} {
				if !strings.Contains(w.Jobs[0].Tail, want) {
					t.Errorf("tail %q lacks %q", w.Jobs[0].Tail, want)
				}
			}
			if !strings.Contains(txt, "exited (exit code 2)") {
				t.Errorf("job_wait's text %q does not say the exit code", txt)
			}
			var o toolJob
			ts.call("job_output", tg.args(map[string]any{"id": st.ID, "stream": "stderr", "tail_lines": 1}), &o)
			if o.Text != "main.c:3: error: x undeclared\n" || code(o) != 2 {
				t.Errorf("job_output tail_lines 1 of stderr: %q exit %d", o.Text, code(o))
			}
			var quick toolJob
			ts.call("job_start", tg.args(map[string]any{"command": "echo built; exit 0", "wait_sec": 60}), &quick)
			if quick.Status != jobdir.StatusExited || code(quick) != 0 || quick.Output != "built\n" {
				t.Errorf("a short job_start: %+v, want exited 0 with its output", quick)
			}
		})
	}
}

// A blocked job_wait does not stall the calls made meanwhile; it returns
// once its job ends.
func TestMCPWaitDoesNotBlockOtherCalls(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			var long toolJob
			ts.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}), &long)
			done := make(chan toolWait, 1)
			go func() {
				var w toolWait
				res, err := ts.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_wait", Arguments: tg.args(map[string]any{"ids": []string{long.ID}, "timeout_sec": 600})})
				if err == nil && !res.IsError {
					b, _ := json.Marshal(res.StructuredContent)
					json.Unmarshal(b, &w)
				}
				done <- w
			}()
			// Calls made while the wait blocks: a start, a wait on another job,
			// a read, a listing.
			var st toolJob
			ts.call("job_start", tg.args(map[string]any{"command": "echo meanwhile", "wait_sec": 0}), &st)
			var w toolWait
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}}), &w)
			var o toolJob
			ts.call("job_output", tg.args(map[string]any{"id": st.ID, "since": "start"}), &o)
			var list toolJobs
			ts.call("job_list", tg.args(map[string]any{}), &list)
			if o.Text != "meanwhile\n" || len(list.Jobs) != 2 {
				t.Fatalf("calls during a job_wait: output %q, %d jobs listed", o.Text, len(list.Jobs))
			}
			select {
			case w := <-done:
				t.Fatalf("job_wait returned while its job runs: %+v", w)
			default:
			}
			var stopped toolJobs
			ts.call("job_stop", tg.args(map[string]any{"ids": []string{long.ID}}), &stopped)
			w = <-done
			if len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusKilled {
				t.Errorf("the blocked job_wait after job_stop: %+v, want the job killed", w)
			}
		})
	}
}

// A job_wait that asked for progress gets progress notifications (every
// 5 s) while it blocks; cancelling it (the client's
// notifications/cancelled) returns at once, leaves the job running, and
// the server goes on serving.
func TestMCPWaitProgressAndCancel(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			var st toolJob
			ts.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}), &st)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			token := "wait-" + tg.name
			done := make(chan error, 1)
			go func() {
				p := &sdk.CallToolParams{Name: "job_wait", Arguments: tg.args(map[string]any{"ids": []string{st.ID}, "timeout_sec": 600, "until_output": "never printed"})}
				p.SetProgressToken(token)
				_, err := ts.cs.CallTool(ctx, p)
				done <- err
			}()
			// A progress notification proves the wait is blocking in the server.
			progressed := eventually(time.Minute, func() bool {
				ts.mu.Lock()
				defer ts.mu.Unlock()
				return len(ts.progress) > 0
			})
			ts.mu.Lock()
			if !progressed || ts.progress[0].ProgressToken != token || ts.progress[0].Total != 600 {
				t.Errorf("progress notifications: %+v, want one with the token and total 600", ts.progress)
			}
			ts.mu.Unlock()
			cancel()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a cancelled job_wait returned no error")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a cancelled job_wait did not return within 30s")
			}
			var list toolJobs
			ts.call("job_list", tg.args(map[string]any{"status": "running"}), &list)
			if len(list.Jobs) != 1 || list.Jobs[0].ID != st.ID {
				t.Fatalf("after the cancelled wait: running %+v, want the job", list.Jobs)
			}
			var w toolWait
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}, "timeout_sec": 0.5}), &w)
			if !w.TimedOut {
				t.Errorf("a wait after the cancelled one: %+v, want timed_out", w)
			}
		})
	}
}

// Output caps on a 100 MB log: each result is at most the cap (default
// 32 KiB, --max-output) plus its notice, the notice says how much is left
// and how to read it, and reading by offset goes on from there.
func TestMCPOutputCaps(t *testing.T) {
	t.Parallel()
	tg := mcpTargets(t)[0] // local: the caps are the server's, not the host's
	ts := startToolServer(t, tg.flags...)
	const lines = 4_545_455 // of 22 bytes: 100,000,010 bytes
	const size = lines * 22
	var st toolJob
	ts.call("job_start", map[string]any{"command": fmt.Sprintf("yes 'a line of the big log' | head -n %d", lines), "wait_sec": 120}, &st)
	if st.Status != jobdir.StatusExited || !st.Trunc {
		t.Fatalf("job_start: %s truncated %v, want exited and truncated", st.Status, st.Trunc)
	}
	data, notice, _ := strings.Cut(st.Output, "\n[")
	if len(data) != 32<<10 || len(st.Output) > 32<<10+400 {
		t.Errorf("job_start output: %d bytes of log, %d in all; want 32768 and a short notice", len(data), len(st.Output))
	}
	if want := fmt.Sprintf("%d bytes after it are not shown", size-32<<10); !strings.Contains(notice, want) || !strings.Contains(notice, "offset 32768") {
		t.Errorf("notice %q lacks %q and where to read on", notice, want)
	}
	// The cursor goes on after what job_start returned.
	var o toolJob
	ts.call("job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	if !o.Trunc || o.Next == nil || *o.Next != 2*32<<10 {
		t.Errorf("second cursor read: truncated %v next %v, want the next 32 KiB", o.Trunc, o.Next)
	}
	ts.call("job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 50_000_000, "max_bytes": 1000}, &o)
	data, _, _ = strings.Cut(o.Text, "\n[")
	if len(data) != 1000 || o.Next == nil || *o.Next != 50_001_000 {
		t.Errorf("offset 50,000,000 max_bytes 1000: %d bytes, next %v", len(data), o.Next)
	}
	ts.call("job_output", map[string]any{"id": st.ID, "tail_lines": 3}, &o)
	if n := strings.Count(o.Text, "\n"); n != 3 || o.Trunc {
		t.Errorf("tail_lines 3: %q", o.Text)
	}
	ts.call("job_output", map[string]any{"id": st.ID, "stream": "stdout", "head_lines": 100000}, &o)
	if len(o.Text) > 32<<10+400 || !o.Trunc || !strings.Contains(o.Text, "read on with offset") {
		t.Errorf("head_lines 100000: %d bytes, truncated %v", len(o.Text), o.Trunc)
	}
	var w toolWait
	ts.call("job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if len(w.Jobs) != 1 || strings.Count(w.Jobs[0].Tail, "\n") != 20 {
		t.Errorf("job_wait tail: %q, want 20 lines", w.Jobs[0].Tail)
	}

	small := startToolServer(t, append(tg.flags, "--max-output", "2048")...)
	ts.call("job_output", map[string]any{"id": st.ID}, &o) // the first server's cursor is its own
	small.call("job_output", map[string]any{"id": st.ID, "since": "start"}, &o)
	data, notice, _ = strings.Cut(o.Text, "\n[")
	if len(data) != 2048 || !strings.Contains(notice, "cap of 2048 bytes") {
		t.Errorf("--max-output 2048: %d bytes, notice %q", len(data), notice)
	}
}

// A job printing invalid UTF-8 and ANSI colours: the text is valid UTF-8
// with the bytes escaped and the colours stripped; raw keeps the colours.
func TestMCPInvalidUTF8AndColours(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ts := startToolServer(t, tg.flags...)
			var st toolJob
			ts.call("job_start", tg.args(map[string]any{"command": `printf 'ok \033[1;32mgreen\033[0m \377\376 end\r\n'; printf '\033[31mfail\033[0m\n' >&2`, "wait_sec": 60}), &st)
			if want := "--- stdout ---\nok green \\xff\\xfe end\n--- stderr ---\nfail\n"; st.Output != want {
				t.Errorf("job_start output %q, want %q", st.Output, want)
			}
			var o toolJob
			ts.call("job_output", tg.args(map[string]any{"id": st.ID, "stream": "stdout", "since": "start", "raw": true}), &o)
			if want := "ok \x1b[1;32mgreen\x1b[0m \\xff\\xfe end\r\n"; o.Text != want {
				t.Errorf("raw: %q, want %q", o.Text, want)
			}
			if !utf8.ValidString(o.Text) {
				t.Errorf("raw text is not valid UTF-8: %q", o.Text)
			}
			var w toolWait
			ts.call("job_wait", tg.args(map[string]any{"ids": []string{st.ID}}), &w)
			if !strings.Contains(w.Jobs[0].Tail, "ok green \\xff\\xfe end\n") {
				t.Errorf("job_wait tail %q: colours not stripped or bytes not escaped", w.Jobs[0].Tail)
			}
		})
	}
}

// When the client closes the server's stdin (or the server gets TERM), the
// server stops the jobs it started and exits 0; a job started with keep, a job started outside the
// server and every job of a server run with --keep-jobs keep running.
func TestMCPStdinEOFReaps(t *testing.T) {
	t.Parallel()
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			cli := append([]string{}, tg.flags...)
			if tg.host != "" {
				cli = append(cli, "-H", tg.host)
			}
			code, outside, errs := bgjob(ctx, append(cli, "run", "-q", "--", "sleep 600")...)
			if code != 0 {
				t.Fatalf("run: %s", errs)
			}
			outside = strings.TrimSpace(outside)
			ts := startToolServer(t, tg.flags...)
			var owned, kept toolJob
			ts.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}), &owned)
			ts.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0, "keep": true}), &kept)
			ts.close()

			keeper := startToolServer(t, append(tg.flags, "--keep-jobs")...)
			var left toolJob
			keeper.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}), &left)
			keeper.close()

			// TERM to the server does the same as closing its stdin.
			termed := startToolServer(t, tg.flags...)
			var byTerm toolJob
			termed.call("job_start", tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}), &byTerm)
			if err := termed.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if !eventually(time.Minute, func() bool {
				return syscall.Kill(termed.cmd.Process.Pid, 0) != nil || processState(termed.cmd.Process.Pid) == "Z"
			}) {
				t.Fatal("bgjob mcp still runs a minute after TERM")
			}
			termed.close()

			want := map[string]jobdir.Status{owned.ID: jobdir.StatusKilled, kept.ID: jobdir.StatusRunning, outside: jobdir.StatusRunning,
				left.ID: jobdir.StatusRunning, byTerm.ID: jobdir.StatusKilled}
			for id, status := range want {
				code, out, errs := bgjob(ctx, append(cli, "status", "--json", id)...)
				if code != 0 {
					t.Fatalf("status %s: %s", id, errs)
				}
				var jobs []jobdir.Job
				if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
					t.Fatalf("status %s: %v: %s", id, err, out)
				}
				j := jobs[0]
				if j.Status != status {
					t.Errorf("job %s after the session ended: %s, want %s", id, j.Status, status)
				}
				if status == jobdir.StatusRunning {
					syscall.Kill(-j.PGID, syscall.SIGKILL)
				}
			}
		})
	}
}

// processState returns the state letter of /proc/PID/stat ("" when gone).
func processState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
