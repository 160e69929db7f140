package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrame is the longest line, one JSON-RPC message, that the stdio
// transport takes: 8 MiB, eight times the longest command run accepts
// (bgjob.MaxCommand, 1 MiB), for the escapes of JSON strings. A longer
// line is refused with an error.
const MaxFrame = 8 << 20

// NewStdioTransport returns the transport bgjob mcp serves on:
// newline-delimited JSON-RPC read from r and written to w, the SDK's
// IOTransport behind a framing layer of bgjob's own. The SDK ends the
// session at the first message it cannot decode; the framing layer hands
// it only lines that it decodes, and answers every other line itself, as
// JSON-RPC says, and reads on: a line that is not JSON gets a parse error
// (-32700, id null); JSON that is not a JSON-RPC message, a batch (MCP
// has none since 2025-06-18) or a line longer than MaxFrame gets an
// invalid request (-32600, with the id when the line has one that JSON-RPC
// allows). The rest of an overlong line is skipped up to its newline. A
// blank line is ignored. The end of r ends the session. Neither r nor w is
// closed.
func NewStdioTransport(r io.Reader, w io.Writer) sdk.Transport {
	lw := &lockedWriter{w: w}
	// The framing layer bounds each line: the SDK's bound stays off.
	return &sdk.IOTransport{Reader: newFrameReader(r, lw, MaxFrame), Writer: lw, MaxLineLength: -1}
}

// lockedWriter serialises the framing layer's answers with the SDK's
// writes, each of which is one whole message.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// frameReader reads lines from r and hands the SDK those that are one
// JSON-RPC message it decodes, each as the message and a newline; it
// answers the others on w.
type frameReader struct {
	br  *bufio.Reader
	w   io.Writer
	max int

	line []byte // the message being handed out, and its newline
	off  int    // how much of line has been read
	err  error  // the end of the input, or a failed answer
}

func newFrameReader(r io.Reader, w io.Writer, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), w: w, max: max}
}

func (f *frameReader) Read(p []byte) (int, error) {
	for f.off == len(f.line) {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.line[f.off:])
	f.off += n
	return n, nil
}

func (*frameReader) Close() error { return nil }

// next reads the next line into f.line, or answers it and leaves f.line
// empty; at the end of the input it sets f.err.
func (f *frameReader) next() {
	if cap(f.line) > 1<<20 {
		f.line = nil // not kept after a big message
	}
	f.line, f.off = f.line[:0], 0
	over := false
	for {
		chunk, err := f.br.ReadSlice('\n')
		n := len(f.line) + len(chunk)
		if bytes.HasSuffix(chunk, []byte("\n")) {
			n-- // the newline is not part of the message
		}
		if !over && n > f.max {
			over = true
			f.line = f.line[:0]
			// Answered at once: the client need not send the rest first.
			f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line of more than %d bytes (skipped up to its newline)", f.max))
		}
		if !over {
			f.line = append(f.line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			// A last line without a newline is a line all the same.
			f.err = err
		}
		break
	}
	if over {
		f.line = f.line[:0]
		return
	}
	msg, id, code, why := checkFrame(f.line)
	if code != 0 || len(msg) == 0 {
		f.line = f.line[:0]
		if code != 0 {
			f.answer(id, code, why)
		}
		return
	}
	f.line = append(f.line[:copy(f.line, msg)], '\n')
}

// answer writes an error response; a failed write ends the input.
func (f *frameReader) answer(id json.RawMessage, code int, msg string) {
	b, err := errorResponse(id, code, msg)
	if err == nil {
		_, err = f.w.Write(b)
	}
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("answering a malformed message: %w", err)
	}
}

// errorResponse returns a JSON-RPC error response with id (null when nil)
// and a newline.
func errorResponse(id json.RawMessage, code int, msg string) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, msg}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// checkFrame looks at one line of input. It returns the message in it
// (without the white space around it) when the SDK decodes it; else an
// error code (0 for a message, and for a blank line, whose msg is empty),
// why, and the id to answer with (nil: null).
func checkFrame(line []byte) (msg, id json.RawMessage, code int, why string) {
	msg = bytes.Trim(line, " \t\r\n")
	if len(msg) == 0 {
		return nil, nil, 0, ""
	}
	if !json.Valid(msg) {
		var v json.RawMessage
		err := json.Unmarshal(msg, &v)
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	if msg[0] == '[' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported"
	}
	// The SDK's own decoding, of the very bytes it will decode.
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return nil, requestID(msg), jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return msg, nil, 0, ""
}

// requestID returns the id of a JSON object as an answer may carry it: a
// string, or a finite number; nil for any other or none.
func requestID(msg []byte) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(msg, &fields) != nil {
		return nil
	}
	raw := fields["id"]
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		b, _ := json.Marshal(s) // invalid UTF-8 becomes U+FFFD
		return b
	case 'n', 't', 'f', '{', '[':
		return nil
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err != nil || math.IsInf(f, 0) {
		return nil
	}
	return raw
}

// guardInput is the SDK's first receiving middleware: tool arguments of
// null are taken as none (the SDK v1.8.0 panics on them, which ended the
// process), and a handler that panics on what a client sent answers an
// internal error and is reported through Warn, where it would have ended
// the server and left its jobs running.
func (s *Server) guardInput(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		if r, ok := req.(*sdk.CallToolRequest); ok && r.Params != nil && string(bytes.TrimSpace(r.Params.Arguments)) == "null" {
			r.Params.Arguments = nil
		}
		defer func() {
			if v := recover(); v != nil {
				s.warn("%s: a panic answered as an internal error: %v\n%s", method, v, debug.Stack())
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error: %v", v)}
			}
		}()
		return next(ctx, method, req)
	}
}
