package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var toolNames = []string{"job_start", "job_output", "job_wait", "job_list", "job_stop", "job_send"}

// Any arguments to any tool get an answer within a minute: a result with
// text (a tool error for what the tool refuses) or a JSON-RPC error for
// arguments that are not an object of the tool's schema; the session goes
// on. The default host cannot be dialled (fuzzOptions): the tools decode
// and check their arguments and run nothing.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"command":"true"}`, `{"command":"","wait_sec":-1}`, `{"command":"x","timeout_sec":1e308,"wait_sec":1e-9}`,
		`{"command":"x","env":{"A=B":"1","":"2"},"pty":true,"pty_size":"0x0"}`, `{"command":"x","name":"../../etc","replace":true}`,
		`{"id":"x","offset":-1,"stream":"both"}`, `{"id":"x","since":"nope","filter":"(","max_bytes":-5,"tail":-1}`,
		`{"ids":["a","b"],"until_output":"(a|a?)+\\1$","timeout_sec":0.001}`, `{"ids":[]}`, `{"all":true,"grace_sec":-1}`,
		`{"id":"x","data":"\u0000\udfff","eof":true}`, `{"host":"\u0000;rm -rf /"}`, `{"workspace":"a/b"}`, `{"x":1}`,
		`[]`, `null`, `"str"`, `{"command":{"a":1}}`,
	} {
		for i := range toolNames {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // not a message at all: FuzzStdio's part
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, done := runServer(t, ctx, fuzzOptions(t), nil)
		defer func() {
			cs.Close()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		}()
		name := toolNames[int(tool)%len(toolNames)]
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			// Refused by the schema, as JSON-RPC says.
		case err != nil:
			t.Fatalf("%s(%s): %v", name, args, err)
		case len(res.Content) == 0 || text(res) == "":
			t.Fatalf("%s(%s): a result without text: %+v", name, args, res)
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("ping after %s(%s): %v", name, args, err)
		}
	})
}
