package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// Malformed lines on bgjob mcp's stdin, through the real binary over a
// pipe: each gets a JSON-RPC error on stdout, the server answers tools/list
// after each, the jobs it started keep running, and closing stdin still
// ends it (exit 0) and stops them.
func TestMCPMalformedLines(t *testing.T) {
	t.Parallel()
	lines := []struct {
		name, line string
		code       int
		id         string
	}{
		{"not json", `{not json}`, -32700, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"string", `"str"`, -32600, "null"},
		{"invalid utf-8", "\xff\xfe", -32700, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
		{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, -32600, "null"},
		{"40 MB", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 40<<20) + `"}}`, -32600, "null"},
		{"id without method", `{"jsonrpc":"2.0","id":8}`, -32600, "8"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "1.5"},
		{"id twice", `{"jsonrpc":"2.0","id":12,"method":"ping","id":13}`, -32600, "null"},
		{"params an array", `{"jsonrpc":"2.0","id":16,"method":"initialize","params":[]}`, -32602, "16"},
	}
	for _, tg := range mcpTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			cmd, in, outp, stderr := startRawMCP(t, tg.flags...)
			t.Cleanup(func() { cmd.Wait() })
			out := make(chan string, 10)
			go func() {
				defer close(out)
				br := bufio.NewReader(outp)
				for {
					s, err := br.ReadString('\n')
					if s != "" {
						out <- s
					}
					if err != nil {
						return
					}
				}
			}()
			send := func(line string) {
				t.Helper()
				if _, err := io.WriteString(in, line+"\n"); err != nil {
					t.Fatalf("writing to bgjob mcp: %v; stderr: %s", err, stderr)
				}
			}
			recv := func() map[string]json.RawMessage {
				t.Helper()
				select {
				case s, ok := <-out:
					var m map[string]json.RawMessage
					if !ok || json.Unmarshal([]byte(s), &m) != nil || string(m["jsonrpc"]) != `"2.0"` {
						t.Fatalf("from bgjob mcp: %q (stdout open: %v); stderr: %s", s, ok, stderr)
					}
					return m
				case <-time.After(2 * time.Minute):
					t.Fatalf("bgjob mcp wrote nothing for 2 minutes; stderr: %s", stderr)
				}
				return nil
			}
			call := func(id int, method, params string) map[string]json.RawMessage {
				t.Helper()
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
				for {
					if m := recv(); string(m["id"]) == fmt.Sprint(id) {
						return m
					}
				}
			}
			// Before initialize: -32600, where the SDK answered code 0.
			var pre struct{ Code int }
			if m := call(90, "tools/call", `{"name":"job_list","arguments":{}}`); json.Unmarshal(m["error"], &pre) != nil || pre.Code != -32600 {
				t.Errorf("tools/call before initialize: %s, want error -32600", m)
			}
			call(0, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e-lines","version":"1"}}`)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			args, _ := json.Marshal(tg.args(map[string]any{"command": "sleep 600", "wait_sec": 0}))
			var started struct {
				StructuredContent toolJob `json:"structuredContent"`
			}
			if err := json.Unmarshal(call(1, "tools/call", `{"name":"job_start","arguments":`+string(args)+`}`)["result"], &started); err != nil {
				t.Fatal(err)
			}
			id := started.StructuredContent.ID
			for i, l := range lines {
				// A 40 MB line is answered before it is read whole.
				sent := make(chan error, 1)
				go func() {
					_, err := io.WriteString(in, l.line+"\n")
					sent <- err
				}()
				m := recv()
				if err := <-sent; err != nil {
					t.Fatalf("writing %s: %v; stderr: %s", l.name, err, stderr)
				}
				var e struct{ Code int }
				if json.Unmarshal(m["error"], &e); e.Code != l.code || string(m["id"]) != l.id {
					t.Errorf("%s: %s, want error %d with id %s", l.name, m, l.code, l.id)
				}
				if m := call(100+i, "tools/list", "{}"); m["result"] == nil {
					t.Fatalf("tools/list after %s: %s", l.name, m)
				}
			}
			status := func() jobdir.Status {
				t.Helper()
				code, out, errs := bgjob(context.Background(), append(tg.flagsWithHost(), "status", "--json", id)...)
				var jobs []jobdir.Job
				if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 1 {
					t.Fatalf("status %s: %s %s", id, out, errs)
				}
				return jobs[0].Status
			}
			if st := status(); st != jobdir.StatusRunning {
				t.Errorf("job after the malformed lines: %s, want running", st)
			}
			in.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("bgjob mcp after stdin closed: %v; stderr: %s", err, stderr)
			}
			if st := status(); st != jobdir.StatusKilled {
				t.Errorf("job after the session ended: %s, want killed", st)
			}
		})
	}
}

// flagsWithHost returns the CLI flags that reach the target's jobs.
func (tg mcpTarget) flagsWithHost() []string {
	if tg.host == "" {
		return tg.flags
	}
	return append(append([]string{}, tg.flags...), "-H", tg.host)
}

// startRawMCP starts `bgjob mcp ARGS...` with pipes for its stdin and
// stdout, its stderr kept; it is killed when the test ends (the caller
// waits for it).
func startRawMCP(t *testing.T, args ...string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, stderr *syncBuffer) {
	t.Helper()
	cmd = exec.Command(bgjobBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=", "BGJOB_HOST=", "BGJOB_WORKSPACE=")
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, in, out, stderr
}
