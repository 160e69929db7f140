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
	"time"

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
// session at the first message it cannot decode, and passes over some it
// decodes without a word; the framing layer hands it only the messages
// JSON-RPC and MCP allow (see checkFrame), and answers every other line
// itself, as JSON-RPC says, and reads on: a line that is not JSON gets a
// parse error (-32700, id null); JSON that is not a JSON-RPC message (an
// id without a method, a result or an error, say), a batch (MCP has none
// since 2025-06-18) or a line longer than MaxFrame gets an invalid
// request (-32600, with the id when the line has one that can be read);
// params that are an array, an invalid params error (-32602). A
// notification and a response are never answered. The rest of an overlong
// line is skipped up to its newline. A blank line is ignored. The end of r
// (EOF) ends the session once every request read before it is answered:
// a client may write its requests and close its input at once (printf
// '...' | bgjob mcp). A failed write, or a read error other than EOF, ends
// it at once. Neither r nor w is closed.
//
// A request the client cancels (notifications/cancelled) is not answered,
// as MCP asks: the SDK ends its handler and would answer it with an error,
// which a client that has forgotten the request takes for a response to
// an unknown id.
func NewStdioTransport(r io.Reader, w io.Writer) sdk.Transport {
	lw := &lockedWriter{w: w}
	fr := newFrameReader(r, lw, MaxFrame)
	fr.requests = &lw.requests
	// The framing layer bounds each line: the SDK's bound stays off.
	return &stdioTransport{IOTransport: &sdk.IOTransport{Reader: fr, Writer: lw, MaxLineLength: -1}, fr: fr}
}

// stdioTransport is the SDK's transport over the framing layer, which
// says when the input has ended (Server.Run).
type stdioTransport struct {
	*sdk.IOTransport
	fr *frameReader
}

// inputEnded is closed once the client's input has ended.
func (t *stdioTransport) inputEnded() <-chan struct{} { return t.fr.ended }

// readsDelivered reports, once the input has ended, whether the client
// closed it cleanly (EOF) after the answer of every call that read through
// a cursor, and every such answer was written: the reads it holds have
// reached the client (cursors).
func (t *stdioTransport) readsDelivered() bool {
	return isClosed(t.fr.ended) && t.fr.answeredAtEnd && t.fr.requests.readsAnswered()
}

// lockedWriter serialises the framing layer's answers with the SDK's
// writes, each of which is one whole message, gives a code to the errors
// the SDK answers without one (see coded), and drops the SDK's answers to
// requests the client cancelled.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	requests requests
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	k, drop := l.requests.answering(p)
	if drop {
		l.requests.delivered(k, false)
		return len(p), nil
	}
	err := l.write(coded(p))
	l.requests.delivered(k, err == nil)
	if err != nil {
		l.requests.broken()
		return 0, err
	}
	return len(p), nil
}

// write writes one whole message: the framing layer's own answers, to
// lines the SDK never sees, come here straight.
func (l *lockedWriter) write(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A piece at a time, so that a client taking the bytes is seen to
	// (requests.settle): one that takes none holds up the end no longer.
	for len(b) > 0 {
		n := min(len(b), writePiece)
		l.requests.writing(true)
		_, err := l.w.Write(b[:n])
		l.requests.writing(false)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// writePiece is the most written to the client at once.
const writePiece = 64 << 10

// requests is what the framing layer knows of the client's requests that
// the SDK has not answered yet (in flight), and which of them the client
// cancelled: the reader adds each request it hands the SDK, and marks one
// that a notifications/cancelled names while it is in flight; the writer
// takes a request out at its answer, and drops the answer to a marked one.
// A cancellation of a request already answered, or never made, is passed
// over. MCP forbids a client to use an id twice in a session; a request
// whose id is in flight is not handed to the SDK, which would answer one
// of the two: the reader answers it at once with an error.
//
// It also follows the calls that may read through a cursor (job_output,
// job_start), whose reads are held until they are known to have reached
// the client (cursors): whether each is still in flight or its answer is
// being written, and whether the answer of one was not written.
//
// At the end of the input the reader waits (settle) until every request
// it handed the SDK is being answered: the SDK, once its input ends,
// cancels the calls in flight and writes nothing more.
type requests struct {
	mu          sync.Mutex
	inFlight    map[string]bool // the id's key: whether it was cancelled
	reads       map[string]bool // the reading calls by key: whether their answer is being written
	undelivered bool            // a reading call's answer was not written (dropped, failed, or not followed)
	untracked   int             // requests in flight past maxInFlight, not followed by id
	failed      bool            // a write failed: no answer reaches the client any more
	busySince   time.Time       // when the write under way began (zero: none)
	settled     sync.Cond       // signalled as requests leave flight, and when a write fails (L: mu)
}

// readingTools are the tools whose calls may hold a read (cursors).
var readingTools = map[string]bool{"job_output": true, "job_start": true}

// maxInFlight bounds the requests followed: past it a request is not
// (its cancellation, if any, is the SDK's alone, and answered).
const maxInFlight = 4096

// idKey returns the key of a request id: a string as its value, a number
// as the float64 the SDK reads it as, so that 7 and 7.0 are one id.
func idKey(raw json.RawMessage) (string, bool) {
	id, ok := requestID(raw)
	if !ok {
		return "", false
	}
	if id[0] == '"' {
		return string(id), true
	}
	f, _ := strconv.ParseFloat(string(id), 64)
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// note records what a message handed to the SDK (its members, m) says: a
// request is in flight; a notifications/cancelled marks the request it
// names, if in flight. It reports a request whose id is in flight
// already (inUse), which is not to be handed to the SDK.
func (r *requests) note(m map[string]json.RawMessage) (inUse bool) {
	var method string
	if json.Unmarshal(m["method"], &method) != nil {
		return false
	}
	id, hasID := m["id"]
	switch {
	case hasID:
		k, ok := idKey(id)
		if !ok {
			return false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, there := r.inFlight[k]; there {
			return true
		}
		var call struct {
			Name string `json:"name"`
		}
		reading := method == "tools/call" && json.Unmarshal(m["params"], &call) == nil && readingTools[call.Name]
		if len(r.inFlight) < maxInFlight {
			if r.inFlight == nil {
				r.inFlight, r.reads = map[string]bool{}, map[string]bool{}
			}
			r.inFlight[k] = false
			if reading {
				r.reads[k] = false
			}
		} else {
			r.untracked++
			r.undelivered = r.undelivered || reading
		}
	case method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m["params"], &p) != nil {
			return false
		}
		k, ok := idKey(p.RequestID)
		if !ok {
			return false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, there := r.inFlight[k]; there {
			r.inFlight[k] = true
		}
	}
	return false
}

// answered reports whether msg, a message the SDK writes, answers a
// cancelled request (to be dropped), and takes the request it answers out
// of flight.
func (r *requests) answered(msg []byte) bool {
	k, drop := r.answering(msg)
	r.delivered(k, !drop)
	return drop
}

// answering is answered, and returns the key of the request msg answers
// ("" when none followed), for delivered once it is written or dropped.
func (r *requests) answering(msg []byte) (k string, drop bool) {
	r.mu.Lock()
	n := len(r.inFlight) + r.untracked
	r.mu.Unlock()
	if n == 0 {
		return "", false
	}
	k, ok := idKey(responseID(msg))
	if !ok {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cancelled, there := r.inFlight[k]
	if !there {
		if r.untracked > 0 {
			// The answer to a request past maxInFlight.
			r.untracked--
			r.settled.Broadcast()
		}
		return "", false
	}
	delete(r.inFlight, k)
	r.settled.Broadcast()
	if _, reading := r.reads[k]; reading {
		r.reads[k] = true
	}
	return k, cancelled
}

// delivered records that the answer to the request of key k was written
// (ok) or not.
func (r *requests) delivered(k string, ok bool) {
	if k == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, reading := r.reads[k]; reading {
		delete(r.reads, k)
		r.undelivered = r.undelivered || !ok
	}
}

// broken records that a write failed: the requests in flight will not be
// answered (the SDK cancels them and writes no more).
func (r *requests) broken() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.settled.Broadcast()
}

// writing records that a piece of a write to the client begins (on) or
// has returned.
func (r *requests) writing(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busySince = time.Time{}
	if on {
		r.busySince = time.Now()
	}
	r.settled.Broadcast()
}

// settle waits until every request handed to the SDK is being answered
// (its answer is being written, or dropped for a cancelled one), until a
// write fails, or until a client that stopped reading has taken nothing
// for endGrace: the SDK writes one answer at a time, and those behind a
// blocked one would never be. It does not wait for the writes: an answer
// already given to the writer is written whatever the SDK learns next
// (Server.Run gives the SDK endGrace more).
func (r *requests) settle() {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(endGrace / 8)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.settled.Broadcast()
			case <-stop:
				return
			}
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled.L = &r.mu
	for !r.failed && len(r.inFlight)+r.untracked > 0 {
		if !r.busySince.IsZero() && time.Since(r.busySince) >= endGrace {
			return
		}
		r.settled.Wait()
	}
}

// readsAnswered reports whether every reading call has had its answer
// written, or is having it written, and none failed to be.
func (r *requests) readsAnswered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, answering := range r.reads {
		if !answering {
			return false
		}
	}
	return !r.undelivered
}

// responseID returns the id of msg if it is a response, nil if not. It
// reads the members in order and stops once it knows: the SDK writes the
// id before the result, which is not read (it may be megabytes).
func responseID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	response := false
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		switch name {
		case "method":
			return nil
		case "result", "error":
			response = true
		}
		if response && id != nil {
			return id
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if name == "id" {
			id = v
		}
	}
	if !response {
		return nil
	}
	return id
}

// coded returns msg, a message the SDK writes and its newline, with an
// error code of 0 made -32600 (invalid request). The SDK v1.8.0 answers
// some requests with an error that has no code, which JSON-RPC has no
// meaning for: a request before initialize, a second initialize, and the
// params of initialize that it cannot read. Each is a request the session
// cannot take as sent. Neither MCP nor the SDK names a code for "not
// initialized" (LSP's -32002 is MCP's "resource not found"), and the SDK
// itself answers -32600 for the other requests it refuses before a
// handler runs (a call without an id, a missing params).
func coded(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"code":0`)) {
		return msg // the rest are not read
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Error   *wireError      `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != nil || m.Error == nil || m.Error.Code != 0 {
		return msg
	}
	m.Error.Code = jsonrpc.CodeInvalidRequest
	b, err := errorResponse(m.ID, *m.Error)
	if err != nil {
		return msg
	}
	return b
}

func (*lockedWriter) Close() error { return nil }

// frameReader reads lines from r and hands the SDK those that are one
// JSON-RPC message it decodes, each as the message and a newline; it
// answers the others on w.
type frameReader struct {
	br  *bufio.Reader
	w   *lockedWriter // its answers go straight out (write), never taken for the SDK's
	max int

	line []byte // the message being handed out, and its newline
	off  int    // how much of line has been read
	err  error  // the end of the input, or a failed answer

	requests *requests // nil: cancellations are the SDK's alone

	ended   chan struct{} // closed once the end of the input is handed to the SDK
	endOnce sync.Once
	// answeredAtEnd says that the input ended (EOF: the client closed it)
	// when every reading call had been answered (requests.readsAnswered).
	answeredAtEnd bool
}

func newFrameReader(r io.Reader, w *lockedWriter, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), w: w, max: max, ended: make(chan struct{})}
}

func (f *frameReader) Read(p []byte) (int, error) {
	for f.off == len(f.line) {
		if f.err != nil {
			// The SDK has had every line. At a clean end, the end waits
			// for the answers to the requests in flight: the SDK, once
			// told, cancels them and writes nothing more.
			f.endOnce.Do(func() {
				clean := errors.Is(f.err, io.EOF) && f.requests != nil
				f.answeredAtEnd = clean && f.requests.readsAnswered()
				if clean {
					f.requests.settle()
				}
				close(f.ended)
			})
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
	msg, id, m, code, why := checkFrame(f.line)
	if code != 0 || len(msg) == 0 {
		f.line = f.line[:0]
		if code != 0 {
			f.answer(id, code, why)
		}
		return
	}
	if f.requests != nil && f.requests.note(m) {
		f.line = f.line[:0]
		id, _ := requestID(m["id"])
		f.answer(id, jsonrpc.CodeInvalidRequest, "invalid request: the id of a request not yet answered (MCP: an id is used once in a session)")
		return
	}
	f.line = append(f.line[:copy(f.line, msg)], '\n')
}

// answer writes an error response; a failed write ends the input.
func (f *frameReader) answer(id json.RawMessage, code int, msg string) {
	b, err := errorResponse(id, wireError{Code: code, Message: msg})
	if err == nil {
		err = f.w.write(b)
	}
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("answering a malformed message: %w", err)
	}
}

// wireError is the error of a JSON-RPC response.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// errorResponse returns a JSON-RPC error response with id (null when nil)
// and a newline.
func errorResponse(id json.RawMessage, e wireError) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// checkFrame looks at one line of input and decides what becomes of it:
// the message in it (without the white space around it), and its members,
// when it is one the SDK is to handle; else an answer, an error code, why, and the id to
// answer with (nil: null); else neither (code 0 and no msg), for a blank
// line and for a message JSON-RPC does not answer that the SDK need not see.
//
// It takes what JSON-RPC 2.0 and MCP allow: an object with "jsonrpc":
// "2.0", each member once, and either a request (a string method; params,
// if any and not null, an object; no result or error) or a response (a
// result or an error object, not both). The id of a request, when it has
// one, is a string or an integer of at most 2^53-1 in magnitude: MCP
// forbids null, and the SDK answers a fraction or a larger number with
// another id (1.5 with 1), for which a client would wait for ever. The id
// of a response is one of those too, or null for an error. A notification
// whose params are an array, and a response with id null, are dropped:
// the SDK would drop them too, and neither is answered.
func checkFrame(line []byte) (msg, id json.RawMessage, m map[string]json.RawMessage, code int, why string) {
	msg = bytes.Trim(line, " \t\r\n")
	if len(msg) == 0 {
		return nil, nil, nil, 0, ""
	}
	if !json.Valid(msg) {
		var v json.RawMessage
		err := json.Unmarshal(msg, &v)
		return nil, nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	invalid := func(id json.RawMessage, why string) (json.RawMessage, json.RawMessage, map[string]json.RawMessage, int, string) {
		return nil, id, nil, jsonrpc.CodeInvalidRequest, "invalid request: " + why
	}
	switch msg[0] {
	case '[':
		return invalid(nil, "batches are not supported")
	case '{':
	default:
		return invalid(nil, "not a JSON-RPC message, which is an object")
	}
	m, twice := members(msg)
	if twice != "" {
		return invalid(nil, fmt.Sprintf("member %q appears twice", twice))
	}
	id, idOK := requestID(m["id"])
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	check := checkResponse
	if _, ok := m["method"]; ok {
		check = checkRequest
	}
	switch code, why, drop := check(m, idOK); {
	case drop:
		return nil, nil, nil, 0, ""
	case code != 0:
		return nil, id, nil, code, why
	}
	// The SDK's own decoding, of the very bytes it will decode.
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return invalid(id, err.Error())
	}
	return msg, nil, m, 0, ""
}

// idRule is what MCP and the SDK take as an id.
const idRule = "an id is a string (no lone surrogate) or an integer of at most 2^53-1 in magnitude"

// checkRequest applies checkFrame's rules to a request, a message (its
// members m) with a method, whose id is one MCP allows when idOK. It
// returns the error to answer with, its code and why; or drop, for a
// message nobody answers; or neither, for one the SDK is to handle.
func checkRequest(m map[string]json.RawMessage, idOK bool) (code int, why string, drop bool) {
	_, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case m["method"][0] != '"':
		return invalidRequest("method must be a string")
	case hasResult || hasError:
		return invalidRequest("a request has no result or error")
	case hasID && !idOK:
		return invalidRequest(idRule)
	}
	p, ok := m["params"]
	switch {
	case !ok || p[0] == '{' || string(p) == "null":
		return 0, "", false
	case p[0] != '[':
		return invalidRequest("params must be an object")
	case !hasID:
		return 0, "", true // a notification
	}
	return jsonrpc.CodeInvalidParams, "invalid params: MCP takes params as an object", false
}

// checkResponse applies checkFrame's rules to a response, a message (its
// members m) without a method, whose id is one MCP allows when idOK. It
// returns what checkRequest returns.
func checkResponse(m map[string]json.RawMessage, idOK bool) (code int, why string, drop bool) {
	_, hasResult := m["result"]
	errObj, hasError := m["error"]
	switch {
	case hasResult == hasError:
		return invalidRequest("a response has a result or an error (and a request a method)")
	case hasError && errObj[0] != '{':
		return invalidRequest("error must be an object")
	case hasError && string(m["id"]) == "null":
		return 0, "", true // the SDK takes no id null
	case !idOK:
		return invalidRequest("a response has its request's id: " + idRule)
	}
	return 0, "", false
}

// invalidRequest is the answer of checkRequest and checkResponse to a
// message that JSON-RPC or MCP does not allow, for why.
func invalidRequest(why string) (code int, answer string, drop bool) {
	return jsonrpc.CodeInvalidRequest, "invalid request: " + why, false
}

// members returns the members of a JSON object, and the name of one that
// appears twice, if any: decoders differ on which of the two they keep.
func members(obj []byte) (map[string]json.RawMessage, string) {
	m := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return m, ""
	}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return m, ""
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return m, ""
		}
		if _, ok := m[name]; ok {
			return m, name
		}
		m[name] = v
	}
	return m, ""
}

// maxID is the largest integer id taken: the SDK reads a number id as a
// float64, which holds every integer up to 2^53 exactly.
const maxID = 1<<53 - 1

// requestID returns raw, an id, as an answer may carry it (nil: null), and
// whether it is an id MCP allows and the SDK answers unchanged: a string
// that decodes without loss, or an integer of at most maxID in magnitude. A number that is no such
// integer is echoed as written, unless a float64 cannot hold it.
func requestID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		// A lone surrogate (\ud800) decodes to U+FFFD, which the SDK
		// would answer: another id. Echoed as written, and refused.
		if bytes.Count([]byte(s), []byte("\ufffd")) != bytes.Count(raw, []byte("\ufffd"))+bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`)) {
			return raw, false
		}
		b, _ := json.Marshal(s)
		return b, true
	case 'n', 't', 'f', '{', '[':
		return nil, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, false
	}
	return raw, f == math.Trunc(f) && math.Abs(f) <= maxID
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
