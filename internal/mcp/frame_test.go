package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// lineClient speaks newline-delimited JSON-RPC to a server run with
// mcp.NewStdioTransport over pipes, a line at a time, as a client that
// may send anything.
type lineClient struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan []byte // each line the server wrote, closed at its end
	done  chan error  // Run's error
}

const initialize = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lines","version":"1"}}}`

// serveLines runs a server with o on pipes and initializes the session.
func serveLines(t testing.TB, o mcp.Options) *lineClient {
	t.Helper()
	c := startLines(t, o)
	c.send(initialize)
	if m := c.recv(); string(m["id"]) != `"init"` || m["result"] == nil {
		t.Fatalf("initialize: %s", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// startLines runs a server with o on pipes, its session not initialized.
func startLines(t testing.TB, o mcp.Options) *lineClient {
	t.Helper()
	srv, err := mcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, in: inW, lines: make(chan []byte, 100), done: make(chan error, 1)}
	go func() {
		err := srv.Run(context.Background(), mcp.NewStdioTransport(inR, outW))
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.lines)
		br := bufio.NewReader(outR)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				c.lines <- b
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.in.Close() })
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// recv returns the next message the server wrote, which must be one
// JSON-RPC message on a line of its own.
func (c *lineClient) recv() map[string]json.RawMessage {
	c.t.Helper()
	select {
	case b, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server's output ended while a message was due")
		}
		m, err := wireMessage(b)
		if err != nil {
			c.t.Fatal(err)
		}
		return m
	case err := <-c.done:
		// Its last lines may still be on their way: the output ended
		// before Run returned.
		c.done <- err
		if b, ok := <-c.lines; ok {
			m, err := wireMessage(b)
			if err != nil {
				c.t.Fatal(err)
			}
			return m
		}
		c.t.Fatalf("the server ended (%v) while a message was due", err)
	case <-time.After(time.Minute):
		c.t.Fatal("no message from the server within a minute")
	}
	return nil
}

// startSleeper starts a job of "sleep 600" with a job_start of request id
// n and returns the job's id.
func (c *lineClient) startSleeper(n int) string {
	c.t.Helper()
	start := c.call(n, "tools/call", `{"name":"job_start","arguments":{"command":"sleep 600","wait_sec":0}}`)
	var res struct {
		StructuredContent job `json:"structuredContent"`
	}
	if err := json.Unmarshal(start["result"], &res); err != nil || res.StructuredContent.Status != jobdir.StatusRunning {
		c.t.Fatalf("job_start: %s (%v)", start, err)
	}
	return res.StructuredContent.ID
}

// call sends a request with id and returns its response.
func (c *lineClient) call(id int, method, params string) map[string]json.RawMessage {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		m := c.recv()
		if string(m["id"]) == fmt.Sprint(id) {
			return m
		}
		if m["method"] == nil {
			c.t.Fatalf("waiting for the answer to %d: %s", id, m)
		}
	}
}

// wireMessage decodes a line the server wrote: one JSON-RPC 2.0 request,
// notification or response, ended by a newline.
func wireMessage(b []byte) (map[string]json.RawMessage, error) {
	line, ok := bytes.CutSuffix(b, []byte("\n"))
	if !ok || bytes.IndexByte(line, '\n') >= 0 {
		return nil, fmt.Errorf("not one line: %q", b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %q: %v", b, err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return nil, fmt.Errorf("no jsonrpc 2.0: %q", b)
	}
	id := m["id"]
	validID := len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
	switch {
	case m["method"] != nil:
		if id != nil && !validID {
			return nil, fmt.Errorf("a request with id %s: %q", id, b)
		}
	case m["error"] != nil:
		var e struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code == nil || e.Message == "" {
			return nil, fmt.Errorf("an error without code and message: %q", b)
		}
		if !validID && string(id) != "null" {
			return nil, fmt.Errorf("an error with id %s: %q", id, b)
		}
	case m["result"] != nil:
		if !validID {
			return nil, fmt.Errorf("a result with id %s: %q", id, b)
		}
	default:
		return nil, fmt.Errorf("neither request, result nor error: %q", b)
	}
	return m, nil
}

// errorCode returns the code of an error response.
func errorCode(t testing.TB, m map[string]json.RawMessage) int {
	t.Helper()
	var e struct{ Code int }
	if m["error"] == nil || json.Unmarshal(m["error"], &e) != nil {
		t.Fatalf("not an error: %s", m)
	}
	return e.Code
}

// malformed are lines that ended the server before it framed its input:
// each gets an error response (with its id where it has a valid one).
var malformed = []struct {
	name, line string
	code       int
	id         string
}{
	{"not json", `{not json}`, -32700, "null"},
	{"empty batch", `[]`, -32600, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`, -32600, "null"},
	{"null", `null`, -32600, "null"},
	{"string", `"str"`, -32600, "null"},
	{"number", `17`, -32600, "null"},
	{"invalid utf-8", "\xff\xfe", -32700, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
	{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, -32600, "null"},
	{"two values", `{"jsonrpc":"2.0","id":6,"method":"tools/list"} {}`, -32700, "null"},
	{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600, "7"},
	{"no version", `{"id":"eight","method":"tools/list"}`, -32600, `"eight"`},
	{"method not a string", `{"jsonrpc":"2.0","id":9,"method":1}`, -32600, "9"},
	{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, "null"},
	{"nested 2000 deep", `{"jsonrpc":"2.0","id":10,"method":"ping","params":{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`, -32600, "10"},
	{"unterminated", `{"jsonrpc":"2.0","id":11,"method":"tools/list"`, -32700, "null"},
	// Found by an adversarial pass: no answer at all, or one with another id.
	{"id without method", `{"jsonrpc":"2.0","id":8}`, -32600, "8"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "1.5"},
	{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, "9007199254740993"},
	{"id past int64", `{"jsonrpc":"2.0","id":1e20,"method":"ping"}`, -32600, "1e20"},
	{"id with a lone surrogate", `{"jsonrpc":"2.0","id":"a\ud800","method":"ping"}`, -32600, `"a\ud800"`},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
	{"array id", `{"jsonrpc":"2.0","id":[12],"method":"ping"}`, -32600, "null"},
	{"id twice", `{"jsonrpc":"2.0","id":12,"method":"ping","id":13}`, -32600, "null"},
	{"method null", `{"jsonrpc":"2.0","id":14,"method":null}`, -32600, "14"},
	{"params a string", `{"jsonrpc":"2.0","id":15,"method":"ping","params":"x"}`, -32600, "15"},
	{"params an array", `{"jsonrpc":"2.0","id":16,"method":"initialize","params":[]}`, -32602, "16"},
	{"notification with params a number", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":1}`, -32600, "null"},
	{"method and result", `{"jsonrpc":"2.0","id":17,"method":"ping","result":{}}`, -32600, "17"},
	{"result and error", `{"jsonrpc":"2.0","id":18,"result":{},"error":{"code":1,"message":"m"}}`, -32600, "18"},
	{"error a string", `{"jsonrpc":"2.0","id":19,"error":"m"}`, -32600, "19"},
	{"result with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, -32600, "null"},
	{"NUL after a message", "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"ping\"}\x00", -32700, "null"},
	{"NUL in a string", "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"pi\x00ng\"}", -32700, "null"},
	{"two messages", `{"jsonrpc":"2.0","id":22,"method":"ping"}{"jsonrpc":"2.0","id":23,"method":"ping"}`, -32700, "null"},
}

// unanswered are lines that JSON-RPC answers with nothing: notifications
// (known or not, even with params MCP does not take) and responses, which
// the server takes for none of its requests.
var unanswered = []struct{ name, line string }{
	{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/nope"}`},
	{"unknown method without id", `{"jsonrpc":"2.0","method":"no/such","params":{}}`},
	{"ping without id", `{"jsonrpc":"2.0","method":"ping"}`},
	{"notification with params an array", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`},
	{"unprompted result", `{"jsonrpc":"2.0","id":30,"result":{}}`},
	{"unprompted null result", `{"jsonrpc":"2.0","id":31,"result":null}`},
	{"unprompted error", `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m"}}`},
	// What a peer answers to a line it could not read: answering it would
	// start two such peers answering each other for ever.
	{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
}

// Lines that get no answer get none, and the server reads on: the answer
// to the next request is the next message.
func TestStdioUnansweredLines(t *testing.T) {
	c := serveLines(t, fuzzOptions(t))
	for i, tc := range unanswered {
		c.send(tc.line)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if m := c.recv(); string(m["id"]) != fmt.Sprint(100+i) || m["result"] == nil {
			t.Errorf("%s: answered %s", tc.name, m)
		}
	}
	c.end()
}

// A request before initialize gets -32600 with its id (the SDK answered
// code 0), as does a second initialize; ping is answered before it.
func TestStdioBeforeInitialize(t *testing.T) {
	c := startLines(t, fuzzOptions(t))
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job_list","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1}}`,
	} {
		c.send(line)
		if m := c.recv(); string(m["id"]) != fmt.Sprint(i+1) || errorCode(t, m) != -32600 {
			t.Errorf("%s: %s, want -32600", line, m)
		}
	}
	if m := c.call(5, "ping", "{}"); m["result"] == nil {
		t.Errorf("ping before initialize: %s", m)
	}
	c.send(initialize)
	if m := c.recv(); string(m["id"]) != `"init"` || m["result"] == nil {
		t.Fatalf("initialize: %s", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if m := c.call(6, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"again","version":"1"}}`); errorCode(t, m) != -32600 {
		t.Errorf("a second initialize: %s, want -32600", m)
	}
	if m := c.call(7, "tools/list", "{}"); m["result"] == nil {
		t.Errorf("tools/list after initialize: %s", m)
	}
	c.end()
}

// Every malformed line gets its error response; the server goes on
// answering, the job it started keeps running, and the end of the input
// still ends the session (and stops the job).
func TestStdioMalformedLines(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c := serveLines(t, mcp.Options{Root: root})
	id := c.startSleeper(1)
	for i, tc := range malformed {
		c.send(tc.line)
		m := c.recv()
		if got := errorCode(t, m); got != tc.code || string(m["id"]) != tc.id {
			t.Errorf("%s: code %d id %s, want %d %s: %s", tc.name, got, m["id"], tc.code, tc.id, m)
		}
		if m := c.call(100+i, "tools/list", "{}"); m["result"] == nil {
			t.Fatalf("tools/list after %s: %s", tc.name, m)
		}
	}
	// A blank line is nothing; a message may end in CR LF.
	c.send("")
	c.send("  \t")
	c.send(`{"jsonrpc":"2.0","id":200,"method":"ping"}` + "\r")
	if m := c.recv(); string(m["id"]) != "200" || m["result"] == nil {
		t.Errorf("ping after blank lines: %s", m)
	}
	cl, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if jobs, err := cl.Status(ctx, id); err != nil || jobs[0].Status != jobdir.StatusRunning {
		t.Fatalf("after the malformed lines: %+v %v, want the job running", jobs, err)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("server: %v", err)
	}
	if jobs, err := cl.Status(ctx, id); err != nil || jobs[0].Status != jobdir.StatusKilled {
		t.Errorf("after the end of the input: %+v %v, want the job killed", jobs, err)
	}
}

// A line over MaxFrame is refused as soon as it is too long, skipped up
// to its newline, and the next line is read as a message again; a line
// of MaxFrame bytes is a message.
func TestStdioOversizedLine(t *testing.T) {
	c := serveLines(t, mcp.Options{Root: t.TempDir()})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 40<<20) + `"}}`
	sent := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.in, big+"\n")
		sent <- err
	}()
	m := c.recv()
	if errorCode(t, m) != -32600 || string(m["id"]) != "null" {
		t.Errorf("a 40 MB line: %s", m)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if m := c.call(2, "tools/list", "{}"); m["result"] == nil {
		t.Fatalf("tools/list after a 40 MB line: %s", m)
	}
	head := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"`
	exact := head + strings.Repeat("y", mcp.MaxFrame-len(head)-3) + `"}}`
	c.send(exact)
	if m := c.recv(); string(m["id"]) != "3" || m["result"] == nil {
		t.Errorf("a line of MaxFrame bytes: %.200s", m)
	}
	c.send(exact[:len(exact)-2] + ` }}`)
	if m := c.recv(); errorCode(t, m) != -32600 {
		t.Errorf("a line of MaxFrame+1 bytes: %.200s", m)
	}
	// Cut by the end of the input: answered, then the session ends.
	io.WriteString(c.in, big[:mcp.MaxFrame+10])
	c.in.Close()
	if m := c.recv(); errorCode(t, m) != -32600 {
		t.Errorf("an overlong last line: %s", m)
	}
	if err := <-c.done; err != nil {
		t.Errorf("server: %v", err)
	}
}

// A failed write of an answer ends the session: the client is gone.
func TestStdioAnswerWriteFails(t *testing.T) {
	srv, err := mcp.New(mcp.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	errGone := errors.New("gone")
	err = srv.Run(context.Background(), mcp.NewStdioTransport(strings.NewReader("{not json}\n"), failWriter{errGone}))
	if !errors.Is(err, errGone) {
		t.Errorf("Run: %v, want %v", err, errGone)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// fuzzOptions serve a fuzzer's requests without running anything: the
// default host is an SSH host that cannot be dialled, so every tool decodes
// and checks its arguments and then fails to connect.
func fuzzOptions(t testing.TB) mcp.Options {
	return mcp.Options{Root: t.TempDir(), Host: "fuzz.invalid", Dial: func(context.Context, string) (bgjob.Runtime, func(), error) {
		return nil, nil, errors.New("no hosts while fuzzing")
	}}
}

// exchange sends input (any bytes) and then a ping, and returns what the
// server wrote up to the ping's answer: the server must read on to it, and
// every line it writes must be one JSON-RPC message.
func (c *lineClient) exchange(input []byte) []map[string]json.RawMessage {
	c.t.Helper()
	const last = `"fuzz-end-6a1f"`
	sent := make(chan error, 1)
	go func() {
		_, err := c.in.Write(append(input, "\n{\"jsonrpc\":\"2.0\",\"id\":"+last+",\"method\":\"ping\"}\n"...))
		sent <- err
	}()
	var got []map[string]json.RawMessage
	for {
		m := c.recv()
		got = append(got, m)
		if string(m["id"]) == last && m["result"] != nil {
			break
		}
	}
	if err := <-sent; err != nil {
		c.t.Fatal(err)
	}
	return got
}

// end closes the input: the session ends, at once and without error.
func (c *lineClient) end() {
	c.t.Helper()
	c.in.Close()
	select {
	case err := <-c.done:
		if err != nil {
			c.t.Fatalf("server: %v", err)
		}
	case <-time.After(time.Minute):
		c.t.Fatal("the server did not end within a minute of the end of its input")
	}
	for b := range c.lines {
		if _, err := wireMessage(b); err != nil {
			c.t.Fatal(err)
		}
	}
}

// No input ends the stdio loop before the end of the input, and every
// line the server writes is one JSON-RPC message.
func FuzzStdio(f *testing.F) {
	for _, tc := range malformed {
		f.Add([]byte(tc.line))
	}
	for _, tc := range unanswered {
		f.Add([]byte(tc.line))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job_list","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n\n\n",
		"\x00\x01{\"\xff\":\"\xfe\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		c := serveLines(t, fuzzOptions(t))
		c.exchange(input)
		c.end()
	})
}

// Tool arguments of null are none: the SDK panicked on them, which ended
// the whole server (every tool but job_send, whose schema has no
// defaults). Found by FuzzToolArguments.
func TestToolArgumentsNull(t *testing.T) {
	c := serveLines(t, fuzzOptions(t))
	for i, name := range toolNames {
		m := c.call(i+1, "tools/call", `{"name":"`+name+`","arguments":null}`)
		var res struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
		if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) == 0 || !res.IsError {
			t.Errorf("%s with arguments null: %s, want a tool error", name, m)
		}
	}
	c.end()
}

// A request the client cancels is not answered (MCP: the receiver of a
// cancellation should not answer it), though the SDK ends its handler and
// would answer an error; the session goes on.
func TestStdioCancelledRequestUnanswered(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c := serveLines(t, mcp.Options{Root: root})
	job := c.startSleeper(1)
	for _, id := range []string{"2", `"w"`} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"job_wait","arguments":{"ids":[%q],"timeout_sec":600}}}`, id, job))
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"no longer needed"}}`, id))
	}
	if m := c.call(3, "ping", "{}"); m["result"] == nil {
		t.Fatalf("ping after the cancellations: %s", m)
	}
	// The handlers end at their cancellation; their answers, were they
	// written, would come within milliseconds.
	select {
	case b := <-c.lines:
		t.Errorf("a cancelled request was answered: %s", b)
	case <-time.After(2 * time.Second):
	}
	// The session goes on. (A cancelled request's id is not used again:
	// MCP forbids it, and while the cancelled answer is on its way it
	// would be dropped for the new one.)
	if m := c.call(4, "ping", "{}"); m["result"] == nil {
		t.Errorf("ping after the cancellations: %s", m)
	}
	// A cancellation of no request in flight marks nothing, and what the
	// framing layer answers itself goes out whatever was cancelled.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":50}}`)
	c.send(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":[1]}`)
	if m := c.recv(); string(m["id"]) != "50" || errorCode(t, m) != -32602 {
		t.Errorf("params an array, after a cancellation of its id: %s, want -32602", m)
	}
	c.end()
}

// A request whose id is in flight (MCP forbids using an id twice in a
// session) is answered at once with an error, and the first request's
// answer still comes: each of the two gets one. Found by an adversarial
// pass: the SDK answered only one of them, and the other waited for ever.
func TestStdioIDInUse(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	c := serveLines(t, mcp.Options{Root: root})
	job := c.startSleeper(1)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"job_wait","arguments":{"ids":[%q],"timeout_sec":5}}}`, job))
	c.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if m := c.recv(); string(m["id"]) != "5" || errorCode(t, m) != -32600 {
		t.Fatalf("a request with the id of one in flight: %s, want -32600 at once", m)
	}
	if m := c.recv(); string(m["id"]) != "5" || m["result"] == nil {
		t.Fatalf("the first request's answer: %s, want its result", m)
	}
	// Once answered, the id may be used again.
	if m := c.call(5, "ping", "{}"); m["result"] == nil {
		t.Errorf("ping with the id of an answered request: %s", m)
	}
	c.end()
}
