package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handler that panics answers an internal error, and the panic is
// reported through Warn: the server goes on.
func TestGuardInputRecovers(t *testing.T) {
	var warned []string
	s, err := New(Options{Root: t.TempDir(), Warn: func(msg string) { warned = append(warned, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	h := s.guardInput(func(context.Context, string, sdk.Request) (sdk.Result, error) { panic("boom") })
	res, err := h(context.Background(), "tools/call", &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "job_list"}})
	var werr *jsonrpc.Error
	if res != nil || !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError || !strings.Contains(werr.Message, "boom") {
		t.Errorf("after a panic: %v, %v; want an internal error", res, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "boom") {
		t.Errorf("warnings %q, want the panic", warned)
	}
}
