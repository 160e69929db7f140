package mcp_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/bench/fixture"
	"github.com/bgjob/bgjob/internal/mcp"
)

// BenchmarkJobList measures job_list ({}: a page of 20, their ports, the
// counts of every job) through a running server over in-memory
// transports, at 176 ended jobs (fabricated) and one running job this
// client started, once their records are kept (docs/benchmarks.md, MCP).
func BenchmarkJobList(b *testing.B) {
	root := filepath.Join(b.TempDir(), "root")
	if _, err := fixture.Make(fixture.Options{Root: root, Workspace: "default", N: 176}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { killAll(root) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := mcp.New(mcp.Options{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	go srv.Run(ctx, st)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	callOK := func(name string, args map[string]any) *sdk.CallToolResult {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
		return res
	}
	res := callOK("job_start", map[string]any{"command": "sleep 300", "wait_sec": 0})
	id, _ := res.StructuredContent.(map[string]any)["id"].(string)
	// Stopped, its end written, before the root goes.
	defer callOK("job_stop", map[string]any{"ids": []string{id}})
	for range 3 {
		callOK("job_list", map[string]any{})
	}
	time.Sleep(2500 * time.Millisecond)
	for b.Loop() {
		callOK("job_list", map[string]any{})
	}
}
