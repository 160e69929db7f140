package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// bgjob mcp over its stdin and stdout: stdout carries the protocol only,
// and when stdin closes the server stops the job it started and exits 0.
func TestMCPOverStdio(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(ctx, nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}) })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"mcp", "--root", root}, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "bgjob" {
		t.Errorf("server name %q, want bgjob", got)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_start", Arguments: map[string]any{"command": "sleep 600", "wait_sec": 0}})
	if err != nil || res.IsError {
		t.Fatalf("job_start: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var j jobdir.Job
	if err := json.Unmarshal(b, &j); err != nil || j.Status != jobdir.StatusRunning {
		t.Fatalf("job_start: %s (%v)", b, err)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("bgjob mcp exited %d after stdin closed; stderr: %s", code, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
	jobs, err := c.Status(ctx, j.ID)
	if err != nil || len(jobs) != 1 || jobs[0].Status != jobdir.StatusKilled {
		t.Errorf("after the session: %+v %v, want the job killed", jobs, err)
	}
}
