package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/internal/mcp"
)

// mcpCommand is how the tool reference is regenerated, for its header and
// for the message of a failed check.
func mcpCommand(file string) string { return "go run ./internal/docgen -mcp " + file }

// runMCP writes the MCP tool reference to file, or with check reports
// whether file holds what would be written.
func runMCP(file string, check bool) error {
	b, err := toolReference()
	if err != nil {
		return err
	}
	if !check {
		return os.WriteFile(file, b, 0o644)
	}
	old, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(old, b) {
		return fmt.Errorf("%s is out of date: run '%s' (or 'task docs')", file, mcpCommand(file))
	}
	return nil
}

// schema is the part of a JSON schema that the reference shows.
type schema struct {
	Type                 any                `json:"type"`
	Description          string             `json:"description"`
	Default              json.RawMessage    `json:"default"`
	Enum                 []any              `json:"enum"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	AdditionalProperties any                `json:"additionalProperties"`
}

// toolReference lists the tools of a server, as a client sees them over
// an in-memory session, and renders them as Markdown, sorted by name.
func toolReference() ([]byte, error) {
	root, err := os.MkdirTemp("", "docgen-mcp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	srv, err := mcp.New(mcp.Options{Root: root})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "docgen", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing the tools: %w", err)
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })

	var w bytes.Buffer
	fmt.Fprintf(&w, "# bgjob MCP tool reference\n\n")
	// The header names the checked-in file, wherever this one is written,
	// so that the bytes do not depend on the path.
	fmt.Fprintf(&w, "<!-- Generated from the server's own schemas by `%s` (task docs); do not edit. -->\n\n", mcpCommand("docs/mcp-tools.md"))
	fmt.Fprintf(&w, "The tools that `bgjob mcp` serves, as a client lists them (`tools/list`). How to register the server and use the tools: [mcp.md](mcp.md).\n\n")
	fmt.Fprintf(&w, "Every result carries structured content (the fields below) and a short text for the model. Errors are tool results with `isError` and a message that says what to do.\n\n")
	fmt.Fprintf(&w, "The server's instructions to the model:\n\n")
	for _, l := range strings.Split(cs.InitializeResult().Instructions, "\n") {
		fmt.Fprintf(&w, "> %s\n", l)
	}
	fmt.Fprintf(&w, "\n")
	for _, t := range tools {
		fmt.Fprintf(&w, "- [`%s`](#%s)\n", t.Name, t.Name)
	}
	for _, t := range tools {
		in, err := decodeSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("%s: input schema: %w", t.Name, err)
		}
		out, err := decodeSchema(t.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("%s: output schema: %w", t.Name, err)
		}
		fmt.Fprintf(&w, "\n## %s\n\n%s\n\n", t.Name, joinLines(t.Description))
		if a := t.Annotations; a != nil {
			fmt.Fprintf(&w, "Title %q; hints: readOnlyHint %v, destructiveHint %v, idempotentHint %v, openWorldHint %v.\n\n",
				t.Title, a.ReadOnlyHint, a.DestructiveHint != nil && *a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint != nil && *a.OpenWorldHint)
		}
		fmt.Fprintf(&w, "### Parameters\n\n| parameter | type | required | default | description |\n|---|---|---|---|---|\n")
		for _, name := range sortedKeys(in.Properties) {
			p := in.Properties[name]
			req := ""
			if slices.Contains(in.Required, name) {
				req = "yes"
			}
			def := ""
			if len(p.Default) > 0 {
				def = "`" + string(p.Default) + "`"
			}
			fmt.Fprintf(&w, "| `%s` | %s | %s | %s | %s |\n", name, typeOf(p), req, def, cell(p.Description))
		}
		fmt.Fprintf(&w, "\n### Result\n\n| field | type | description |\n|---|---|---|\n")
		fields(&w, "", out)
	}
	return w.Bytes(), nil
}

func decodeSchema(v any) (*schema, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// fields writes a row per field of an object schema, and the fields of
// the objects of its arrays as prefix[].field.
func fields(w *bytes.Buffer, prefix string, s *schema) {
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		fmt.Fprintf(w, "| `%s%s` | %s | %s |\n", prefix, name, typeOf(p), cell(p.Description))
		switch {
		case p.Items != nil && len(p.Items.Properties) > 0:
			fields(w, prefix+name+"[].", p.Items)
		case len(p.Properties) > 0:
			fields(w, prefix+name+".", p)
		}
	}
}

// typeOf names a schema's type: "integer", "string or null", "array of
// string", "object of string", or the values it takes: "`TERM` or `INT`".
func typeOf(s *schema) string {
	if len(s.Enum) > 0 {
		var vs []string
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vs = append(vs, "`"+string(b)+"`")
		}
		if len(vs) == 1 {
			return vs[0]
		}
		return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				types = append(types, x)
			}
		}
		if len(types) < len(t) {
			types = append(types, "null")
		}
	}
	for i, t := range types {
		switch {
		case t == "array" && s.Items != nil && len(s.Items.Properties) > 0:
			types[i] = "array of objects"
		case t == "array" && s.Items != nil:
			types[i] = "array of " + typeOf(s.Items)
		case t == "object" && len(s.Properties) == 0:
			if ap, err := decodeSchema(s.AdditionalProperties); err == nil && ap.Type != nil {
				types[i] = "object of " + typeOf(ap)
			}
		}
	}
	return strings.Join(types, " or ")
}

func sortedKeys(m map[string]*schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// joinLines makes a description wrapped in its source into one paragraph.
func joinLines(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes text safe for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(joinLines(s), "|", `\|`) }
