package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/testneed"
)

// The MCP clients of these tests are ones nobody on bgjob wrote: the MCP
// Inspector CLI and the TypeScript SDK's client, at the versions pinned in
// mcpclients/package-lock.json (.ci/run installs node and npm).

var (
	npmOnce sync.Once
	npmErr  error
	npmOut  []byte
)

// mcpClients returns the directory of the JS clients, with the pinned
// packages installed (npm ci, once, when node_modules is missing or older
// than the lockfile).
func mcpClients(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			testneed.Missing(t, "%s (.ci/run installs it)", bin)
		}
	}
	dir, err := filepath.Abs("mcpclients")
	if err != nil {
		t.Fatal(err)
	}
	npmOnce.Do(func() {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		if err != nil {
			npmErr = err
			return
		}
		if st, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !st.ModTime().Before(lock.ModTime()) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = dir
		npmOut, npmErr = cmd.CombinedOutput()
	})
	if npmErr != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, npmErr, npmOut)
	}
	return dir
}

// toolsList is what a client reads from tools/list.
type toolsList struct {
	Tools []struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Annotations *struct {
			Title           string `json:"title"`
			ReadOnlyHint    bool   `json:"readOnlyHint"`
			DestructiveHint *bool  `json:"destructiveHint"`
			IdempotentHint  bool   `json:"idempotentHint"`
			OpenWorldHint   *bool  `json:"openWorldHint"`
		} `json:"annotations"`
		InputSchema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"inputSchema"`
	} `json:"tools"`
}

// checkToolList checks what the tools say of themselves as a client
// received it: a title and the hints, one-paragraph descriptions, and the
// dialect at each regular expression parameter.
func checkToolList(t *testing.T, l toolsList) {
	t.Helper()
	want := map[string][4]bool{ // readOnly, destructive, idempotent, openWorld
		"job_list": {true, false, true, false}, "job_wait": {true, false, true, false},
		"job_output": {false, false, false, false}, "job_stop": {false, true, true, false},
		"job_start": {false, true, false, true}, "job_send": {false, true, false, true},
		"job_remove": {false, true, true, false},
	}
	if len(l.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(l.Tools), len(want))
	}
	for _, tl := range l.Tools {
		a := tl.Annotations
		if a == nil || tl.Title == "" || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: title %q, annotations %+v: want a title and every hint", tl.Name, tl.Title, a)
			continue
		}
		if got := [4]bool{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}; got != want[tl.Name] {
			t.Errorf("%s: hints %v, want %v", tl.Name, got, want[tl.Name])
		}
		if strings.Contains(tl.Description, "\n") {
			t.Errorf("%s: a hard line break in %q", tl.Name, tl.Description)
		}
		for name, p := range tl.InputSchema.Properties {
			if strings.Contains(p.Description, "\n") {
				t.Errorf("%s.%s: a hard line break in %q", tl.Name, name, p.Description)
			}
			dialect := map[string]string{"until_output": "POSIX extended regular expression, as the host's grep -E", "filter": "POSIX extended regular expression"}[name]
			if !strings.Contains(p.Description, dialect) {
				t.Errorf("%s.%s: %q does not name its dialect (%s)", tl.Name, name, p.Description, dialect)
			}
		}
	}
}

// callResult is a tools/call result as a client received it.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent struct {
		ID   string `json:"id"`
		Jobs []struct {
			ID   string `json:"id"`
			Tail string `json:"tail"`
		} `json:"jobs"`
		Matched string `json:"matched"`
	} `json:"structuredContent"`
	IsError bool `json:"isError"`
}

func (r callResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// checkWaitText checks that job_wait's text says what its structured
// content says: the whole 20-line tail of `seq 1 30`.
func checkWaitText(t *testing.T, r callResult) {
	t.Helper()
	if r.IsError || len(r.StructuredContent.Jobs) != 1 {
		t.Fatalf("job_wait: %+v", r)
	}
	tail := r.StructuredContent.Jobs[0].Tail
	var want strings.Builder
	for i := 11; i <= 30; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if tail != want.String() {
		t.Errorf("structuredContent tail %q, want lines 11 to 30", tail)
	}
	if !strings.Contains(r.text(), strings.TrimSuffix(tail, "\n")) {
		t.Errorf("text %q does not hold the tail %q", r.text(), tail)
	}
}

// checkRefused checks the tool error for until_output ^\d+$.
func checkRefused(t *testing.T, r callResult) {
	t.Helper()
	if !r.IsError || !strings.Contains(r.text(), `\d is RE2 or Perl syntax`) || !strings.Contains(r.text(), "[0-9]") {
		t.Errorf("job_wait until_output ^\\d+$: %+v, want a tool error that says what grep -E reads and what to write", r)
	}
}

// The Inspector CLI, one server process a call, as a user tries bgjob
// with it: tools/list with its own schema portability check (--strict,
// which warned 17 times of output schemas' type lists before),
// then a job that outlives its session (keep), waited for in the next.
func TestMCPInspectorCLI(t *testing.T) {
	t.Parallel()
	dir := mcpClients(t)
	bin, root := bgjobBinary(t), t.TempDir()
	t.Cleanup(func() { killAll(root) })
	inspect := func(wantErr bool, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "mcp-inspector"),
			append([]string{"--cli", "-e", "BGJOB_ROOT=" + root, "-e", "GORACE=atexit_sleep_ms=0", bin, "mcp"}, args...)...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if (err != nil) != wantErr {
			t.Fatalf("inspector %v: %v, want error %v\nstdout: %s\nstderr: %s", args, err, wantErr, stdout.Bytes(), stderr.Bytes())
		}
		// --strict finds no schema, input or output, less portable: no
		// type list (["null", "integer"]), which it warns of.
		if bytes.Contains(stderr.Bytes(), []byte("Schema")) || bytes.Contains(stderr.Bytes(), []byte("Warning")) {
			t.Errorf("inspector %v finds schemas less portable:\n%s", args, stderr.Bytes())
		}
		return stdout.Bytes()
	}
	out := inspect(false, "--strict", "--method", "tools/list")
	var l toolsList
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	checkToolList(t, l)
	listFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(listFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	gemini := exec.Command("node", "gemini.mjs", listFile)
	gemini.Dir = dir
	if b, err := gemini.CombinedOutput(); err != nil || len(b) > 0 {
		t.Errorf("schemas outside the subset Gemini takes (%v):\n%s", err, b)
	}

	var start callResult
	out = inspect(false, "--method", "tools/call", "--tool-name", "job_start", "--tool-arg", "command=seq 1 30", "--tool-arg", "wait_sec=0", "--tool-arg", "keep=true")
	if err := json.Unmarshal(out, &start); err != nil || start.StructuredContent.ID == "" {
		t.Fatalf("job_start: %v\n%s", err, out)
	}
	ids := `ids=["` + start.StructuredContent.ID + `"]`
	var wait callResult
	out = inspect(false, "--method", "tools/call", "--tool-name", "job_wait", "--tool-arg", ids, "--tool-arg", "timeout_sec=60")
	if err := json.Unmarshal(out, &wait); err != nil {
		t.Fatalf("job_wait: %v\n%s", err, out)
	}
	checkWaitText(t, wait)
	// A tool error: the Inspector prints the result and exits non-zero.
	var refused callResult
	out = inspect(true, "--method", "tools/call", "--tool-name", "job_wait", "--tool-arg", ids, "--tool-arg", `until_output=^\d+$`)
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&refused); err != nil {
		t.Fatalf("job_wait: %v\n%s", err, out)
	}
	checkRefused(t, refused)
}

// The TypeScript SDK's client over stdio, one session (client.mjs): it
// validates structured content against the output schemas as it reads.
func TestMCPSDKClient(t *testing.T) {
	t.Parallel()
	dir := mcpClients(t)
	bin, root := bgjobBinary(t), t.TempDir()
	t.Cleanup(func() { killAll(root) })
	argv, _ := json.Marshal([]string{bin, "mcp"})
	cmd := exec.Command("node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BGJOB="+string(argv), "BGJOB_ROOT="+root, "BGJOB_HOST=", "BGJOB_WORKSPACE=", "GORACE=atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.Bytes())
	}
	var report struct {
		toolsList
		Violations []string   `json:"violations"`
		Wait       callResult `json:"wait"`
		Refused    callResult `json:"refused"`
		Matched    callResult `json:"matched"`
		Build      string     `json:"build"`
		Digest     struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Events []bg.Event `json:"events"`
			} `json:"structuredContent"`
		} `json:"digest"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.Bytes())
	}
	for _, v := range report.Violations {
		t.Errorf("schema outside the subset Gemini takes: %s", v)
	}
	checkToolList(t, report.toolsList)
	checkWaitText(t, report.Wait)
	checkRefused(t, report.Refused)
	if m := report.Matched.StructuredContent.Matched; report.Matched.IsError || m != "15" {
		t.Errorf("job_wait until_output ^[0-9]+5$: %+v, want 15 matched", report.Matched)
	}
	if evs := report.Digest.StructuredContent.Events; len(evs) != 1 || evs[0].ID != report.Build || evs[0].Event != bg.EventEnded || evs[0].ExitCode == nil || *evs[0].ExitCode != 3 {
		t.Errorf("the next call after build ended: events %+v, want build's end with exit code 3", evs)
	}
}

// The Inspector CLI, a server a call, with a fixed reader: job_output
// returns each byte once across the servers (each commits the read its
// client had when the client closed its input), every result says where
// to read on from, and a job the session did not keep is stopped at its
// end with reason session_end.
func TestMCPInspectorCLIReadsOnce(t *testing.T) {
	t.Parallel()
	dir := mcpClients(t)
	bin, root := bgjobBinary(t), t.TempDir()
	t.Cleanup(func() { killAll(root) })
	type result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			ID     string `json:"id"`
			Output string `json:"output"`
			Text   string `json:"text"`
			Jobs   []struct {
				Status string `json:"status"`
				Reason string `json:"reason"`
			} `json:"jobs"`
		} `json:"structuredContent"`
	}
	call := func(tool string, args ...string) result {
		t.Helper()
		argv := []string{"--cli", "-e", "BGJOB_ROOT=" + root, "-e", "GORACE=atexit_sleep_ms=0", bin, "mcp", "--reader", "inspector", "--method", "tools/call", "--tool-name", tool}
		for _, a := range args {
			argv = append(argv, "--tool-arg", a)
		}
		cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "mcp-inspector"), argv...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %s %v: %v\nstdout: %s\nstderr: %s", tool, args, err, stdout.Bytes(), stderr.Bytes())
		}
		var r result
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || len(r.Content) == 0 {
			t.Fatalf("inspector %s %v: %v\n%s", tool, args, err, stdout.Bytes())
		}
		return r
	}
	st := call("job_start", "command=seq 1 3", "wait_sec=0", "keep=true")
	id := st.StructuredContent.ID
	call("job_wait", `ids=["`+id+`"]`, "timeout_sec=60")
	got := st.StructuredContent.Output
	for i := range 3 {
		o := call("job_output", "id="+id)
		got += o.StructuredContent.Text
		if !strings.Contains(o.Content[0].Text, "next_offset stdout 6, stderr 0") {
			t.Errorf("job_output #%d: %q does not say where to read on from", i+1, o.Content[0].Text)
		}
	}
	if got != "1\n2\n3\n" {
		t.Errorf("job_start and three job_output calls, a server each, returned %q, want each line once", got)
	}
	// A job not kept is stopped when its session ends, and says why.
	sl := call("job_start", "command=sleep 600", "wait_sec=0")
	w := call("job_wait", `ids=["`+sl.StructuredContent.ID+`"]`, "timeout_sec=60")
	if j := w.StructuredContent.Jobs; len(j) != 1 || j[0].Status != "killed" || j[0].Reason != "session_end" {
		t.Errorf("a job its session did not keep, after the session: %+v, want killed (session_end)", j)
	}
}
