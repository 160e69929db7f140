package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// serve runs a server with o (a fresh root unless o.Root is set) and
// returns a connected client. The server is shut down, and every job
// under the root killed, when the test ends.
func serve(t *testing.T, o mcp.Options) *sdk.ClientSession {
	t.Helper()
	if o.Root == "" {
		o.Root = t.TempDir()
	}
	root := o.Root
	t.Cleanup(func() { killAll(root) })
	ctx, cancel := context.WithCancel(context.Background())
	cs, done := runServer(t, ctx, o, nil)
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
		cancel()
	})
	return cs
}

// runServer runs a server with o over in-memory transports until ctx ends
// or the client (options copts) closes; done receives Run's error.
func runServer(t *testing.T, ctx context.Context, o mcp.Options, copts *sdk.ClientOptions) (*sdk.ClientSession, <-chan error) {
	t.Helper()
	srv, err := mcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, copts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, done
}

// killAll kills the process group of every job under root.
func killAll(root string) {
	metas, _ := filepath.Glob(filepath.Join(root, "*", "*", "meta.json"))
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if m, err := jobdir.DecodeMeta(b); err == nil && m.PGID > 1 {
			syscall.Kill(-m.PGID, syscall.SIGKILL)
		}
	}
}

// call calls a tool that must succeed and decodes its structured content
// into out.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res := callRaw(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, b, err)
	}
	return res
}

func callRaw(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type job struct {
	ID       string        `json:"id"`
	Host     string        `json:"host"`
	Status   jobdir.Status `json:"status"`
	ExitCode *int          `json:"exit_code"`
	PID      int           `json:"pid"`
	Output   string        `json:"output"`
	Text     string        `json:"text"`
	Tail     string        `json:"tail"`
	Skipped  int64         `json:"skipped_bytes"`
	Trunc    bool          `json:"truncated"`
	Next     *int64        `json:"next_offset"`
	EndedAt  *time.Time    `json:"ended_at"`
}

type waited struct {
	Jobs     []job  `json:"jobs"`
	Matched  string `json:"matched"`
	TimedOut bool   `json:"timed_out"`
}

func exitCode(j job) int {
	if j.ExitCode == nil {
		return -1
	}
	return *j.ExitCode
}

// The dev-server workflow: start, wait for a line, read only new output,
// give input, wait for the end; the cursor reads add up to the whole
// output, each byte once.
func TestStartWaitOutputStop(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{
		"command": `echo first; read a; echo "got $a"; read b; echo second; echo oops >&2`,
		"stdin":   true, "wait_sec": 0, "name": "dev",
	}, &st)
	if st.Status != jobdir.StatusRunning || st.PID == 0 {
		t.Fatalf("job_start: %+v, want a running job with a pid", st)
	}
	read := st.Output
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^first$"}, &w)
	if w.Matched != "first" || w.TimedOut {
		t.Fatalf("job_wait until_output: %+v", w)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": "dev", "stream": "stdout"}, &o)
	read += o.Text
	if read != "first\n" {
		t.Fatalf("after the first line, the cursor reads gave %q", read)
	}
	var sent job
	call(t, cs, "job_send", map[string]any{"id": st.ID, "data": "x\n"}, &sent)
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^got x$"}, &w)
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	read += o.Text
	call(t, cs, "job_send", map[string]any{"id": st.ID, "data": "y\n"}, &sent)
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited || exitCode(w.Jobs[0]) != 0 || w.TimedOut {
		t.Fatalf("job_wait: %+v, want one job exited 0", w)
	}
	if !strings.Contains(w.Jobs[0].Tail, "second\n") || !strings.Contains(w.Jobs[0].Tail, "oops\n") {
		t.Errorf("job_wait tail %q lacks the last lines of both streams", w.Jobs[0].Tail)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	read += o.Text
	if want := "first\ngot x\nsecond\n"; read != want {
		t.Errorf("cursor reads gave %q, want %q: each byte exactly once", read, want)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	if o.Text != "" {
		t.Errorf("a read after the end returned %q again", o.Text)
	}
	// stderr has a cursor of its own, and nothing of it was read yet.
	call(t, cs, "job_output", map[string]any{"id": st.ID}, &o)
	if o.Text != "oops\n" {
		t.Errorf("both streams after reading stdout: %q, want only stderr's %q", o.Text, "oops\n")
	}
	// offset and since start are stateless: they see everything.
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 6}, &o)
	if o.Text != "got x\nsecond\n" || o.Next == nil || *o.Next != 19 {
		t.Errorf("offset 6: %q next %v", o.Text, o.Next)
	}

	var long job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &long)
	var stopped struct{ Jobs []job }
	call(t, cs, "job_stop", map[string]any{"ids": []string{long.ID}}, &stopped)
	if len(stopped.Jobs) != 1 || stopped.Jobs[0].Status != jobdir.StatusKilled {
		t.Fatalf("job_stop: %+v, want one killed job", stopped)
	}
	var list struct {
		Jobs []job `json:"jobs"`
	}
	call(t, cs, "job_list", map[string]any{}, &list)
	if len(list.Jobs) != 2 || list.Jobs[0].ID != long.ID || list.Jobs[1].ID != st.ID {
		t.Errorf("job_list: %+v, want the two jobs, newest first", list.Jobs)
	}
}

// A command that ends at once returns its status and output from
// job_start.
func TestStartReturnsQuickEnd(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "printf 'a\\033[31mred\\033[0m \\377\\n'; exit 3", "wait_sec": 60}, &st)
	if st.Status != jobdir.StatusExited || exitCode(st) != 3 {
		t.Fatalf("job_start: %+v, want exited 3", st)
	}
	if want := "ared \\xff\n"; st.Output != want {
		t.Errorf("output %q, want %q (colours stripped, the invalid byte escaped)", st.Output, want)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start", "raw": true}, &o)
	if want := "a\x1b[31mred\x1b[0m \\xff\n"; o.Text != want {
		t.Errorf("raw: %q, want %q", o.Text, want)
	}
}

// A filtered read never takes lines away from unfiltered reads.
func TestFilterNeverLosesData(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "printf 'a1\\nb1\\na2\\nb2\\n'", "wait_sec": 60}, &st)
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "filter": "^a"}, &o)
	if o.Text != "a1\na2\n" || o.Skipped != 6 {
		t.Errorf("filter ^a: %q, skipped %d; want a1, a2 and 6 bytes skipped", o.Text, o.Skipped)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "filter": "^a"}, &o)
	if o.Text != "" {
		t.Errorf("filter ^a again: %q, want nothing new", o.Text)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "filter": "^b"}, &o)
	if o.Text != "b1\nb2\n" {
		t.Errorf("filter ^b after ^a: %q, want b1 and b2", o.Text)
	}
	// job_start read the output into the unfiltered cursor; since start
	// sees it all.
	call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start", "filter": "2$"}, &o)
	if o.Text != "a2\nb2\n" {
		t.Errorf("since start, filter 2$: %q", o.Text)
	}
	// The filter is a POSIX extended regular expression, as until_output.
	call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start", "filter": "^(a|b)[[:digit:]]$"}, &o)
	if o.Text != "a1\nb1\na2\nb2\n" {
		t.Errorf("since start, filter ^(a|b)[[:digit:]]$: %q", o.Text)
	}
}

// max_bytes cuts a read; the cursor moves over what was returned only, so
// the next reads bring the rest.
func TestMaxBytesCursor(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "read x; seq 1 1000", "stdin": true, "wait_sec": 0}, &st)
	got := st.Output
	var sent job
	call(t, cs, "job_send", map[string]any{"id": st.ID, "eof": true}, &sent)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited {
		t.Fatalf("job_wait: %+v, want the job exited", w)
	}
	if got != "" {
		t.Fatalf("job_start with wait_sec 0 read %q", got)
	}
	cuts := 0
	for range 100 {
		var o job
		call(t, cs, "job_output", map[string]any{"id": st.ID, "max_bytes": 1000}, &o)
		if o.Text == "" {
			break
		}
		data := strings.Split(o.Text, "\n[")[0]
		if len(data) > 1000 {
			t.Fatalf("a read of %d bytes, over max_bytes", len(data))
		}
		if o.Trunc {
			cuts++
		}
		got += data
	}
	var want strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got != want.String() {
		t.Errorf("capped cursor reads gave %d bytes, want %d, each byte once", len(got), want.Len())
	}
	if cuts == 0 {
		t.Error("no read was cut to max_bytes")
	}
}

// A blocked job_wait does not stall other calls; it returns once the job
// is stopped.
func TestWaitDoesNotBlockOthers(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "echo up; sleep 600", "wait_sec": 0}, &st)
	type answer struct {
		w   waited
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_wait", Arguments: map[string]any{"ids": []string{st.ID}, "timeout_sec": 600}})
		var a answer
		a.err = err
		if err == nil {
			b, _ := json.Marshal(res.StructuredContent)
			a.err = json.Unmarshal(b, &a.w)
		}
		done <- a
	}()
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^up$"}, &w)
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start"}, &o)
	if o.Text != "up\n" || o.Status != jobdir.StatusRunning {
		t.Fatalf("job_output during a job_wait: %+v", o)
	}
	select {
	case a := <-done:
		t.Fatalf("job_wait returned while the job runs: %+v %v", a.w, a.err)
	default:
	}
	var stopped struct{ Jobs []job }
	call(t, cs, "job_stop", map[string]any{"ids": []string{st.ID}}, &stopped)
	a := <-done
	if a.err != nil || len(a.w.Jobs) != 1 || a.w.Jobs[0].Status != jobdir.StatusKilled || a.w.TimedOut {
		t.Fatalf("job_wait after job_stop: %+v %v", a.w, a.err)
	}
}

// Cancelling a job_wait returns at once and leaves the job running.
func TestWaitCancelled(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &st)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_wait", Arguments: map[string]any{"ids": []string{st.ID}, "timeout_sec": 600}})
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled job_wait returned no error")
	}
	var list struct{ Jobs []job }
	call(t, cs, "job_list", map[string]any{"status": "running"}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != st.ID {
		t.Errorf("after the cancelled wait: running %+v, want the job", list.Jobs)
	}
}

// A timeout is a result, not an error: timed_out, the jobs as they are.
func TestWaitTimeout(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "timeout_sec": 0.2}, &w)
	if !w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusRunning {
		t.Errorf("job_wait: %+v, want timed_out and the job running", w)
	}
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "timeout_sec": 0.2, "until_output": "never"}, &w)
	if !w.TimedOut || w.Matched != "" {
		t.Errorf("job_wait until_output: %+v, want timed_out", w)
	}
}

func TestToolErrors(t *testing.T) {
	cs := serve(t, mcp.Options{Dial: func(context.Context, string) (bgjob.Runtime, func(), error) {
		panic("dialled a host that is not allowed")
	}, AllowHosts: []string{"web*"}})
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"unknown id", "job_output", map[string]any{"id": "nosuchjob"}, "job_list shows the jobs"},
		{"unknown id wait", "job_wait", map[string]any{"ids": []string{"nosuchjob"}, "timeout_sec": 5}, "job_list shows the jobs"},
		{"empty command", "job_start", map[string]any{"command": ""}, "command is empty"},
		{"env name with =", "job_start", map[string]any{"command": "true", "env": map[string]any{"A=B": "x"}}, "invalid variable name"},
		{"env value with NUL", "job_start", map[string]any{"command": "true", "env": map[string]any{"A": "x\x00"}}, "environment variable A: its value holds a NUL byte"},
		{"env of the job's marker", "job_start", map[string]any{"command": "true", "env": map[string]any{"BGJOB_JOB_ID": "x"}}, "environment variable BGJOB_JOB_ID: bgjob sets it"},
		{"pattern with NUL", "job_wait", map[string]any{"ids": []string{"x"}, "until_output": "a\x00"}, "pattern \"a\\x00\" holds a NUL byte"},
		{"unknown parameter", "job_start", map[string]any{"command": "true", "wait": 1}, "wait"},
		{"host not allowed", "job_list", map[string]any{"host": "db1"}, "not allowed"},
		{"bad stream", "job_output", map[string]any{"id": "x", "stream": "both2"}, "enum: both2 does not equal any of: [stdout stderr both]"},
		{"bad since", "job_output", map[string]any{"id": "x", "since": "old"}, "enum: old does not equal any of: [new start]"},
		{"bad signal", "job_stop", map[string]any{"ids": []string{"x"}, "signal": "STOP"}, "enum: STOP does not equal any of: [TERM INT QUIT HUP KILL USR1 USR2 ALRM]"},
		{"RE2 filter", "job_output", map[string]any{"id": "x", "filter": `\d+`}, `\d is RE2`},
		{"remove without ids", "job_remove", map[string]any{}, "name the jobs to remove in ids, or set all"},
		{"remove ids and all", "job_remove", map[string]any{"ids": []string{"x"}, "all": true}, "give ids or all, not both"},
		{"offset of both", "job_output", map[string]any{"id": "x", "offset": 3}, "offset needs stream"},
		{"tail and head", "job_output", map[string]any{"id": "x", "tail_lines": 2, "head_lines": 2}, "tail_lines does not go with head_lines"},
		{"tail from the start", "job_output", map[string]any{"id": "x", "tail_lines": 2, "since": "start"}, `tail_lines does not go with offset (or since "start")`},
		{"bad filter", "job_output", map[string]any{"id": "x", "filter": "("}, "filter"},
		{"wrong type", "job_output", map[string]any{"id": 5}, ""},
		{"missing id", "job_output", map[string]any{}, ""},
		{"no ids", "job_stop", map[string]any{}, "ids"},
		{"send no stdin", "job_send", map[string]any{"id": "nosuchjob", "data": "x"}, "job_list"},
		{"bad status", "job_list", map[string]any{"status": "done"}, "running queued exited killed lost not_run unreadable"},
		{"wait too long", "job_wait", map[string]any{"ids": []string{"x"}, "timeout_sec": 601}, "at most 600"},
		// Past 292 years the conversion to a duration overflows: the job
		// would run with no timeout at all.
		{"timeout overflows", "job_start", map[string]any{"command": "sleep 600", "timeout_sec": 1e12, "wait_sec": 0}, "timeout_sec is at most"},
		{"timeout over 10 years", "job_start", map[string]any{"command": "sleep 600", "timeout_sec": 1e9, "wait_sec": 0}, "timeout_sec is at most"},
		{"grace overflows", "job_stop", map[string]any{"ids": []string{"x"}, "grace_sec": 1e12}, "grace_sec is at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := callRaw(t, cs, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("%s(%v) succeeded: %s", tc.tool, tc.args, text(res))
			}
			if !strings.Contains(text(res), tc.want) {
				t.Errorf("error %q does not contain %q", text(res), tc.want)
			}
		})
	}
	// The server is still there.
	var list struct{ Jobs []job }
	call(t, cs, "job_list", map[string]any{}, &list)
}

// When the client goes away the server stops the jobs it started, except
// those started with keep.
func TestShutdownStopsOwnJobs(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Root: root}, nil)
	var owned, kept job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &owned)
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0, "keep": true}, &kept)
	// A job started outside this server is never touched.
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	outside, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	jobs, err := c.Status(ctx, owned.ID, kept.ID, outside.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []jobdir.Status{jobdir.StatusKilled, jobdir.StatusRunning, jobdir.StatusRunning}
	for i, j := range jobs {
		if j.Status != want[i] {
			t.Errorf("after shutdown job %s is %s, want %s", j.ID, j.Status, want[i])
		}
	}
}

// A job the server started and someone removed since (bgjob rm, prune)
// is done with: the server stops the others when its session ends and
// reports no error.
func TestShutdownAfterRemove(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Root: root}, nil)
	var gone, owned job
	call(t, cs, "job_start", map[string]any{"command": "true"}, &gone)
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &owned)
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if gone.Status != jobdir.StatusExited {
		t.Fatalf("job_start of true: %+v, want it exited", gone)
	}
	if _, err := c.Remove(ctx, []string{gone.ID}, bgjob.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	jobs, err := c.Status(ctx, owned.ID)
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].Status != jobdir.StatusKilled || jobs[0].Reason != bgjob.ReasonSessionEnd {
		t.Errorf("after shutdown job %s is %s (reason %q), want killed (session_end)", owned.ID, jobs[0].Status, jobs[0].Reason)
	}
}

// INT or TERM (Run's ctx ending) ends the calls in flight, so that the
// server stops its jobs and exits at once, not when a job_wait of up to
// 600 s gives up.
func TestSignalEndsBlockedWait(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	srv, err := mcp.New(mcp.Options{Root: root, ProgressEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ctx, signal := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	blocked := make(chan struct{}, 1)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
			select {
			case blocked <- struct{}{}:
			default:
			}
		},
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	var owned job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &owned)
	waited := make(chan error, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "job_wait", Arguments: map[string]any{"ids": []string{owned.ID}, "timeout_sec": 600}}
		p.SetProgressToken("w")
		_, err := cs.CallTool(context.Background(), p)
		waited <- err
	}()
	<-blocked // the wait has begun: its progress comes
	signal()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server still runs a minute after its ctx ended, behind a job_wait of 600 s")
	}
	<-waited
	cs.Close()
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), owned.ID)
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].Status != jobdir.StatusKilled {
		t.Errorf("after the signal the server's job is %s, want killed", jobs[0].Status)
	}
}

// Escaping makes text longer than its bytes (\xNN is four): the text still
// fits the cap, next_offset points after what the text shows, and the
// notice says how much is left and how to read it.
func TestCapWithEscapedBytes(t *testing.T) {
	cs := serve(t, mcp.Options{MaxOutput: 4096})
	var st job
	call(t, cs, "job_start", map[string]any{"command": `head -c 20000 /dev/zero | tr '\0' '\377'`, "wait_sec": 60}, &st)
	if len(st.Output) > 4096+300 || !st.Trunc {
		t.Fatalf("job_start output: %d bytes, truncated %v; want at most the cap and a notice", len(st.Output), st.Trunc)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 0}, &o)
	data, notice, _ := strings.Cut(o.Text, "\n[")
	if len(data) != 4096 || o.Next == nil || *o.Next != 1024 || !o.Trunc {
		t.Fatalf("offset 0: %d bytes of text, next %v, truncated %v; want 4096, 1024, true", len(data), o.Next, o.Trunc)
	}
	if !strings.Contains(notice, "18976 bytes after it are not shown") || !strings.Contains(notice, "offset 1024") {
		t.Errorf("notice %q does not say how much is left and where to read on", notice)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 19000}, &o)
	if o.Text != strings.Repeat(`\xff`, 1000) || o.Trunc {
		t.Errorf("offset 19000: %d bytes, truncated %v; want the last 1000 bytes escaped", len(o.Text), o.Trunc)
	}
}

func TestNotFoundNamesTheJob(t *testing.T) {
	cs := serve(t, mcp.Options{Workspace: "w1"})
	res := callRaw(t, cs, "job_output", map[string]any{"id": "nosuchjob"})
	if want := "no job nosuchjob in workspace w1 on this machine; job_list shows the jobs"; !res.IsError || text(res) != want {
		t.Errorf("unknown id: %q (error %v), want %q", text(res), res.IsError, want)
	}
}

// A job that ends before printing the line job_wait waits for ends the wait
// at once, with its status and last lines: a crashed dev server is not
// waited for until the timeout.
func TestWaitUntilOutputJobEnds(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "echo 'port 3000 in use' >&2; exit 1", "wait_sec": 0}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "Listening on", "timeout_sec": 600}, &w)
	if w.Matched != "" || w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited || exitCode(w.Jobs[0]) != 1 {
		t.Fatalf("job_wait until_output on a job that failed: %+v", w)
	}
	if w.Jobs[0].Tail != "port 3000 in use\n" {
		t.Errorf("tail %q, want the job's last line", w.Jobs[0].Tail)
	}
}

// A cursor read that escaping cuts short moves the cursor over what its
// text shows, no further: the next read returns the rest (it moved over
// all it had read, and repeated reads lost the bytes it could not show).
func TestCursorCutByEscapes(t *testing.T) {
	cs := serve(t, mcp.Options{MaxOutput: 4096})
	var st job
	call(t, cs, "job_start", map[string]any{"command": `head -c 2000 /dev/zero | tr '\0' '\377'`, "wait_sec": 0}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	data, notice, _ := strings.Cut(o.Text, "\n[")
	if len(data) != 4096 || !o.Trunc || o.Next == nil || *o.Next != 1024 {
		t.Fatalf("cursor read of 2000 invalid bytes: %d bytes of text, truncated %v, next %v", len(data), o.Trunc, o.Next)
	}
	if !strings.Contains(notice, "976 bytes after it are not shown; call job_output again for the next part") {
		t.Errorf("notice %q", notice)
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout"}, &o)
	if o.Text != strings.Repeat(`\xff`, 976) || o.Trunc {
		t.Errorf("the next cursor read: %d bytes, truncated %v; want the other 976 escaped", len(o.Text), o.Trunc)
	}
}

// A filtered read judges whole lines only: a matching line that the read's
// cap cuts in two, or that the job is still writing, is returned whole by
// a later read, never tested in part and passed over.
func TestFilterWholeLines(t *testing.T) {
	cs := serve(t, mcp.Options{MaxOutput: 4096})
	gate := filepath.Join(t.TempDir(), "gate")
	// 4086 bytes of other lines, then a match across the 4096-byte cut;
	// then a match written in two parts around the gate.
	cmd := `i=0; while [ $i -lt 200 ]; do echo "other line number $i, padded to forty"; i=$((i+1)); done | head -c 4085; echo; echo "MATCH one at the cut"; printf 'MATCH two '; while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo 'in two parts'`
	var st job
	call(t, cs, "job_start", map[string]any{"command": cmd, "wait_sec": 0}, &st)
	var got []string
	read := func() {
		t.Helper()
		var o job
		call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "filter": "^MATCH"}, &o)
		data, _, _ := strings.Cut(o.Text, "\n[")
		if data != "" {
			got = append(got, strings.Split(strings.TrimSuffix(data, "\n"), "\n")...)
		}
	}
	eventually(t, 20*time.Second, func() bool { read(); return len(got) > 0 })
	for range 3 {
		read()
	}
	if !slices.Equal(got, []string{"MATCH one at the cut"}) {
		t.Errorf("before the second line ends: %q, want only the first", got)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() bool { read(); return len(got) > 1 })
	if !slices.Equal(got, []string{"MATCH one at the cut", "MATCH two in two parts"}) {
		t.Errorf("filtered reads returned %q", got)
	}
}

// A second job_start of a running name warns; replace stops the jobs of
// the name before it starts (the restart of a dev server).
func TestStartReplace(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	type started struct {
		job
		Replaced []string `json:"replaced"`
		SameName []string `json:"same_name_running"`
	}
	start := func(args map[string]any) (started, string) {
		t.Helper()
		args["command"], args["name"], args["wait_sec"] = "sleep 600", "srv", 0
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_start", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("job_start: %v %s", err, text(res))
		}
		var s started
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s, text(res)
	}
	first, txt := start(map[string]any{})
	if len(first.SameName) != 0 || strings.Contains(txt, "warning") {
		t.Errorf("first start: %+v %q, want no warning", first, txt)
	}
	second, txt := start(map[string]any{})
	if len(second.SameName) != 1 || second.SameName[0] != first.ID || !strings.Contains(txt, "warning: job "+first.ID) {
		t.Errorf("second start: %+v %q, want a warning of %s", second, txt, first.ID)
	}
	third, txt := start(map[string]any{"replace": true})
	sort.Strings(third.Replaced)
	want := []string{first.ID, second.ID}
	sort.Strings(want)
	if !slices.Equal(third.Replaced, want) || !strings.Contains(txt, "stopped first") {
		t.Errorf("replace: %+v %q, want %v replaced", third, txt, want)
	}
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), first.ID, second.ID, third.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []jobdir.Status{jobdir.StatusKilled, jobdir.StatusKilled, jobdir.StatusRunning} {
		if jobs[i].Status != w || jobs[i].LiveProcesses != 0 && w != jobdir.StatusRunning {
			t.Errorf("job %s: %s with %d processes, want %s", jobs[i].ID, jobs[i].Status, jobs[i].LiveProcesses, w)
		}
	}
	res, _ := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_start", Arguments: map[string]any{"command": "true", "replace": true}})
	if res == nil || !res.IsError || !strings.Contains(text(res), "replace needs a name") {
		t.Errorf("replace without a name: %v", text(res))
	}
}

// job_start pty: the command has a terminal of the size asked for, a
// prompt is answered with job_send, the exit status is the command's, and
// job_output gives the text without the terminal's CRs (with the input,
// which the terminal echoes).
func TestStartPTY(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{
		"command":  `test -t 0 && test -t 1 && echo tty; stty size; printf '\033[1mname?\033[0m '; read n; echo "hi $n"; exit 3`,
		"pty":      true,
		"pty_size": "100x40",
		"wait_sec": 0,
	}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "name", "timeout_sec": 30}, &w)
	if w.Matched == "" {
		t.Fatalf("job_wait until_output name: %+v", w)
	}
	var sent job
	call(t, cs, "job_send", map[string]any{"id": st.ID, "data": "bob\n"}, &sent)
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "timeout_sec": 30}, &w)
	if len(w.Jobs) != 1 || exitCode(w.Jobs[0]) != 3 {
		t.Fatalf("job_wait: %+v, want exit 3", w)
	}
	var o job
	call(t, cs, "job_output", map[string]any{"id": st.ID, "since": "start"}, &o)
	for _, want := range []string{"tty\n", "40 100\n", "name? bob\nhi bob\n"} {
		if !strings.Contains(o.Text, want) {
			t.Errorf("output %q lacks %q", o.Text, want)
		}
	}
	if strings.ContainsAny(o.Text, "\r\033") {
		t.Errorf("output %q has a CR or an escape", o.Text)
	}
	res, _ := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_start", Arguments: map[string]any{"command": "true", "pty_size": "80x24"}})
	if res == nil || !res.IsError || !strings.Contains(text(res), "pty_size goes with pty") {
		t.Errorf("pty_size without pty: %v", text(res))
	}
	res, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job_start", Arguments: map[string]any{"command": "true", "pty": true, "pty_size": "80"}})
	if res == nil || !res.IsError || !strings.Contains(text(res), "not a terminal size") {
		t.Errorf("pty_size 80: %v", text(res))
	}
}

// The instructions tell the model what becomes of its jobs: with KeepJobs
// nothing stops them when the session ends.
func TestInstructionsKeepJobs(t *testing.T) {
	for _, keep := range []bool{false, true} {
		cs := serve(t, mcp.Options{KeepJobs: keep})
		instr := cs.InitializeResult().Instructions
		stopped := strings.Contains(instr, "stopped when the session ends")
		if stopped == keep || !strings.HasPrefix(instr, "bgjob runs shell commands") {
			t.Errorf("KeepJobs %v: instructions %q", keep, instr)
		}
	}
}

// A reader name that cannot name a cursor is refused when the server is
// made, not by each job_start after its job has started.
func TestBadReader(t *testing.T) {
	for _, r := range []string{"../x", "a b", strings.Repeat("r", 65)} {
		if _, err := mcp.New(mcp.Options{Root: t.TempDir(), Reader: r}); !errors.Is(err, bgjob.ErrUsage) {
			t.Errorf("New with reader %q: %v, want ErrUsage", r, err)
		}
	}
}

// job_send to a job that has ended says so once, and what to do instead.
func TestSendEnded(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "true", "stdin": true}, &st)
	if st.Status != jobdir.StatusExited {
		t.Fatalf("job_start of true: %+v, want it exited", st)
	}
	res := callRaw(t, cs, "job_send", map[string]any{"id": st.ID, "data": "x"})
	msg := text(res)
	if !res.IsError || strings.Count(msg, "ended") != 1 || !strings.Contains(msg, "job_start a new job") {
		t.Errorf("job_send to an ended job: %q", msg)

	}
}

// job_stop grace_sec 0 kills at once: the job's TERM handler never runs
// (KILL is the only signal), where the default grace lets it run and exit
// 3. Told apart by what the job did, not by the clock: timings of a stop
// on a loaded machine spread by seconds (grace 0's KILL once came 4.6 s
// after the stop, the default's 5.1 s).
func TestStopGraceZero(t *testing.T) {
	cs := serve(t, mcp.Options{Root: t.TempDir()})
	const handler = "trap 'echo cleaned up; exit 3' TERM; echo ready; while :; do sleep 0.1; done"
	for _, c := range []struct {
		args map[string]any
		code int
		out  bool
	}{
		{map[string]any{"grace_sec": 0}, 137, false},
		{map[string]any{}, 3, true},
	} {
		var st job
		call(t, cs, "job_start", map[string]any{"command": handler, "wait_sec": 0}, &st)
		var w waited
		call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "ready"}, &w)
		c.args["ids"] = []string{st.ID}
		var stopped struct{ Jobs []job }
		call(t, cs, "job_stop", c.args, &stopped)
		if len(stopped.Jobs) != 1 || exitCode(stopped.Jobs[0]) != c.code {
			t.Errorf("job_stop %v: %+v, want exit code %d", c.args, stopped.Jobs, c.code)
		}
		var out job
		call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": 0}, &out)
		if got := strings.Contains(out.Text, "cleaned up"); got != c.out {
			t.Errorf("job_stop %v: the TERM handler ran: %v, want %v (stdout %q)", c.args, got, c.out, out.Text)
		}
	}
}

// TestShutdownStopsCancelledStarts: a job_start the client cancelled may
// have started its job all the same (a launch is not tied to the
// request: the wrapper, once started, writes its meta.json itself); the
// server stops such a job with its others when its session ends, where
// it left it running until the next server's or prune's orphan pass.
func TestShutdownStopsCancelledStarts(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	cs, done := runServer(t, context.Background(), mcp.Options{Root: root}, nil)
	answered := 0
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%10)*time.Millisecond/2)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_start", Arguments: map[string]any{"command": "sleep 600", "wait_sec": 0}})
		if err == nil && !res.IsError {
			answered++
		}
		cancel()
	}
	cs.Close()
	if err := <-done; err != nil {
		// The answer to a cancelled call may find the in-memory pipe
		// closed; the jobs are what this test is about.
		t.Logf("server: %v", err)
	}
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(context.Background(), bgjob.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range page.Jobs {
		if j.Status == jobdir.StatusRunning {
			t.Errorf("job %s, started by a cancelled job_start, still runs after the session ended", j.ID)
		}
	}
	// Else the test saw no start cut short that went on.
	if len(page.Jobs) <= answered {
		t.Fatalf("%d jobs for %d job_starts answered: no cancelled start started a job", len(page.Jobs), answered)
	}
	t.Logf("%d jobs, %d job_starts answered", len(page.Jobs), answered)
}

// Filtered reads cut to max_bytes return every matching line once: the
// cursor stops before the first line the cap left out (it once moved over
// what the read took, and 299 of 300 lines were lost).
func TestFilterCappedReadsLoseNothing(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": `i=1; while [ $i -le 300 ]; do echo "line $i match"; echo "other $i"; i=$((i+1)); done`, "wait_sec": 60}, &st)
	if st.Status != jobdir.StatusExited {
		t.Fatalf("job_start: %+v, want the job exited", st)
	}
	var got, want strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&want, "line %d match\n", i)
	}
	cuts := 0
	for range 100 {
		var o job
		call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "filter": "^line [0-9]+ match$", "max_bytes": 1000}, &o)
		if o.Text == "" {
			break
		}
		if o.Trunc {
			cuts++
		}
		data, _, _ := strings.Cut(o.Text, "\n[")
		got.WriteString(data)
	}
	if cuts == 0 {
		t.Error("no read was cut to max_bytes: the test proves nothing")
	}
	if got.String() != want.String() {
		t.Errorf("filtered capped reads gave %d of the %d matching lines", strings.Count(got.String(), "\n"), 300)
	}
}

// A filtered read gets past a line longer than its cap, which it judges a
// cap's worth at a time: the reads once stayed at its start for ever, each
// saying "call again", and the lines after it never came.
func TestFilterGetsPastALineLongerThanTheCap(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": `head -c 100000 /dev/zero | tr '\0' a; echo; echo match-me; head -c 5000 /dev/zero | tr '\0' b; echo match-long; echo match-2`, "wait_sec": 60}, &st)
	if st.Status != jobdir.StatusExited {
		t.Fatalf("job_start: %+v, want the job exited", st)
	}
	var got strings.Builder
	calls := 0
	for ; calls < 50; calls++ {
		var o job
		call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "filter": "match", "max_bytes": 4096}, &o)
		if o.Text == "" {
			break
		}
		data, _, _ := strings.Cut(o.Text, "\n[")
		got.WriteString(data)
	}
	if calls == 50 {
		t.Fatalf("50 filtered reads did not reach the end of the output; got %q", got.String())
	}
	for _, want := range []string{"match-me\n", "match-2\n"} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("filtered reads past a 100,000-byte line: %q, want it to hold %q", got.String(), want)
		}
	}
	// The long matching line is shown (its start, cut), once per piece
	// that matches.
	if !strings.Contains(got.String(), "match-long") {
		t.Errorf("the long line that matches at its end was not shown: %q", got.String())
	}
}

// A timeout_sec below a nanosecond is a timeout, not none: it was made
// 0, which means no timeout, and the job ran on.
func TestTinyTimeoutIsATimeout(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "sleep 30", "timeout_sec": 1e-10, "wait_sec": 20}, &st)
	if st.Status != jobdir.StatusKilled {
		t.Errorf("job_start with timeout_sec 1e-10: %s (exit %v), want it killed by its timeout", st.Status, st.ExitCode)
	}
}

// A max_bytes smaller than the next character (4 bytes of UTF-8, or a
// byte that is not UTF-8, written as four) still gets on: each read
// returns at least one whole character, as the CLI's --max-bytes does, so
// reads through the cursor and by offset each reach the end.
func TestMaxBytesBelowACharacter(t *testing.T) {
	cs := serve(t, mcp.Options{})
	const want = "𝄞\\xffaé\n"
	for _, max := range []int{1, 2, 3} {
		var st job
		call(t, cs, "job_start", map[string]any{"command": `printf '\360\235\204\236\377a\303\251\n'`, "wait_sec": 0}, &st)
		var w waited
		call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
		if w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited {
			t.Fatalf("job_wait: %+v, want the job exited", w)
		}
		for _, mode := range []string{"cursor", "offset"} {
			got := ""
			off := int64(0)
			reads := 0
			for ; reads < 20; reads++ {
				args := map[string]any{"id": st.ID, "max_bytes": max}
				if mode == "offset" {
					args["stream"], args["offset"] = "stdout", off
				}
				var o job
				call(t, cs, "job_output", args, &o)
				data := strings.Split(o.Text, "\n[")[0]
				got += data
				if o.Next != nil {
					off = *o.Next
				}
				if !o.Trunc {
					break
				}
				if data == "" {
					t.Fatalf("max_bytes %d, %s: a read cut to the cap returned nothing (%q): no read ever gets on", max, mode, o.Text)
				}
			}
			if got != want {
				t.Errorf("max_bytes %d, %s: %d reads gave %q, want %q", max, mode, reads, got, want)
			}
		}
	}
}

// A read cut to max_bytes inside an escape sequence of a job without a
// terminal never shows a piece of it ("PASS[0m", ";32mPASS"): the cut
// backs off to the sequence's start, or takes it whole. Every cap from 1
// byte up cuts at every place.
func TestMaxBytesNeverSplitsASequence(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": `for i in 1 2 3; do printf '\033[1;32mPASS\033[0m ok\n'; done`, "wait_sec": 0}, &st)
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if w.TimedOut || len(w.Jobs) != 1 || w.Jobs[0].Status != jobdir.StatusExited {
		t.Fatalf("job_wait: %+v, want the job exited", w)
	}
	want := strings.Repeat("PASS ok\n", 3)
	for max := 1; max <= 20; max++ {
		got := ""
		off := int64(0)
		for reads := 0; reads < 100; reads++ {
			var o job
			call(t, cs, "job_output", map[string]any{"id": st.ID, "stream": "stdout", "offset": off, "max_bytes": max}, &o)
			got += strings.Split(o.Text, "\n[")[0]
			off = *o.Next
			if !o.Trunc {
				break
			}
		}
		if got != want {
			t.Errorf("max_bytes %d: reads made %q, want %q", max, got, want)
		}
	}
}
