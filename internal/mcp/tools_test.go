package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/internal/mcp"
)

// listTools returns the tools as a client lists them.
func listTools(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	tools := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tl.Name] = tl
	}
	if len(tools) != 7 {
		t.Fatalf("%d tools, want 7", len(tools))
	}
	return tools
}

// geminiSubset reports where schema (decoded JSON) leaves the subset of
// JSON Schema that Gemini's function declarations take: one type a schema
// (no type list, anyOf, oneOf, allOf, not or $ref), and typed items in
// every array.
func geminiSubset(path string, schema any) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: schema %v is not an object", path, schema)}
	}
	var bad []string
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "$ref", "$defs"} {
		if _, ok := s[k]; ok {
			bad = append(bad, fmt.Sprintf("%s: %s", path, k))
		}
	}
	typ, ok := s["type"].(string)
	if !ok {
		return append(bad, fmt.Sprintf("%s: type %v, want one type", path, s["type"]))
	}
	switch typ {
	case "array":
		items, ok := s["items"]
		if !ok {
			return append(bad, path+": an array without items")
		}
		bad = append(bad, geminiSubset(path+"[]", items)...)
	case "object":
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			bad = append(bad, geminiSubset(path+"."+name, p)...)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			bad = append(bad, geminiSubset(path+"{}", ap)...)
		}
	}
	return bad
}

// Every tool's input schema is in the subset Gemini-backed clients accept:
// before, job_start's wait_sec and line_buffered, job_output's offset,
// job_stop's ids and grace_sec and job_wait's ids and timeout_sec were
// type lists (["null", ...]), and every request of a session failed.
func TestInputSchemasOneType(t *testing.T) {
	tools := listTools(t, serve(t, mcp.Options{}))
	for name, tl := range tools {
		for _, b := range geminiSubset(name, tl.InputSchema) {
			t.Errorf("input schema: %s", b)
		}
		// Strict validators warn of a type list in an output schema too:
		// a field without a value is left out instead of null.
		for _, b := range geminiSubset(name, tl.OutputSchema) {
			t.Errorf("output schema: %s", b)
		}
	}
	// The geminiSubset check itself catches what inference gave.
	var old any
	json.Unmarshal([]byte(`{"type":"object","properties":{"ids":{"type":["null","array"],"items":{"type":"string"}},"x":{"type":"array"}}}`), &old)
	if got := geminiSubset("old", old); len(got) != 2 {
		t.Errorf("geminiSubset of the old schema: %v, want two findings", got)
	}
}

// Every tool has a title and the hints clients use to auto-approve reads
// and to confirm destructive calls; descriptions are one paragraph each,
// and every regular expression parameter names its dialect.
func TestToolAnnotationsAndDescriptions(t *testing.T) {
	tools := listTools(t, serve(t, mcp.Options{}))
	type want struct{ readOnly, destructive, idempotent, openWorld bool }
	for name, w := range map[string]want{
		"job_list":   {readOnly: true, idempotent: true},
		"job_wait":   {readOnly: true, idempotent: true},
		"job_output": {},
		"job_stop":   {destructive: true, idempotent: true},
		"job_start":  {destructive: true, openWorld: true},
		"job_send":   {destructive: true, openWorld: true},
		"job_remove": {destructive: true, idempotent: true},
	} {
		tl := tools[name]
		a := tl.Annotations
		if a == nil || tl.Title == "" || a.Title != tl.Title {
			t.Errorf("%s: title %q, annotations %+v: want a title in both", name, tl.Title, a)
			continue
		}
		got := want{a.ReadOnlyHint, a.DestructiveHint != nil && *a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint != nil && *a.OpenWorldHint}
		if got != w || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: hints %+v, want %+v, each set", name, got, w)
		}
		if strings.Contains(tl.Description, "\n") {
			t.Errorf("%s: description has a hard line break: %q", name, tl.Description)
		}
	}
	param := func(tool, name string) string {
		p, _ := tools[tool].InputSchema.(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
		d, _ := p["description"].(string)
		return d
	}
	if d := param("job_wait", "until_output"); !strings.Contains(d, "POSIX extended regular expression") || !strings.Contains(d, "grep -E") {
		t.Errorf("until_output: %q, want its dialect, POSIX ERE as grep -E reads it", d)
	}
	if d := param("job_output", "filter"); !strings.Contains(d, "POSIX extended regular expression") {
		t.Errorf("filter: %q, want its dialect, POSIX ERE", d)
	}
}

// job_wait's text says what its structured content says: the whole tail
// (20 lines), where it showed 5.
func TestWaitTextIsStructuredContent(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "seq 1 30", "wait_sec": 0}, &st)
	var w waited
	res := call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}}, &w)
	if len(w.Jobs) != 1 || w.Jobs[0].Tail == "" {
		t.Fatalf("job_wait: %+v", w)
	}
	tail := w.Jobs[0].Tail
	if n := strings.Count(tail, "\n"); n != 20 {
		t.Errorf("tail has %d lines, want 20: %q", n, tail)
	}
	if !strings.Contains(text(res), strings.TrimSuffix(tail, "\n")) {
		t.Errorf("text %q does not hold the tail %q", text(res), tail)
	}
}

// until_output refuses RE2 syntax that grep -E reads otherwise (once, for
// several jobs), and takes the POSIX spelling.
func TestWaitUntilOutputDialect(t *testing.T) {
	cs := serve(t, mcp.Options{})
	var a, b job
	call(t, cs, "job_start", map[string]any{"command": "echo listening on 8080; sleep 600", "wait_sec": 0}, &a)
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &b)
	res := callRaw(t, cs, "job_wait", map[string]any{"ids": []string{a.ID, b.ID}, "until_output": `on \d+`, "timeout_sec": 30})
	if !res.IsError || !strings.Contains(text(res), `\d is RE2`) || strings.Count(text(res), "RE2") != 1 {
		t.Fatalf("job_wait with \\d: %v %q, want one tool error naming \\d", res.IsError, text(res))
	}
	var w waited
	call(t, cs, "job_wait", map[string]any{"ids": []string{a.ID, b.ID}, "until_output": `on [[:digit:]]+`, "timeout_sec": 60}, &w)
	if w.Matched != "listening on 8080" {
		t.Errorf("job_wait with [[:digit:]]: %+v", w)
	}
}
