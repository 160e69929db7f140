package mcp

import (
	"strconv"
	"testing"
)

// The bookkeeping of requests in flight and cancelled: which answers the
// writer drops.
func TestCancelledAnswers(t *testing.T) {
	note := func(r *requests, line string) {
		t.Helper()
		_, _, m, code, why := checkFrame([]byte(line))
		if code != 0 {
			t.Fatalf("%s: %s", line, why)
		}
		r.note(m)
	}
	request := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{}}` }
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
	}
	answer := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	for _, tc := range []struct {
		name    string
		in      []string // what the client sent, in order
		out     string   // what the SDK writes
		dropped bool
	}{
		{"the answer to a cancelled request", []string{request("7"), cancel("7")}, answer("7"), true},
		{"an error, the id a string", []string{request(`"a"`), cancel(`"a"`)}, `{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"x"}}`, true},
		{"the id written otherwise", []string{request("7"), cancel("7.0")}, answer("7"), true},
		{"the result before the id", []string{request("9"), cancel("9")}, `{"jsonrpc":"2.0","result":{"x":[1,{"id":1}]},"id":9}`, true},
		{"a request not cancelled", []string{request("8"), cancel("7")}, answer("8"), false},
		{"a string that is not the number", []string{request("7"), cancel(`"7"`)}, answer("7"), false},
		// A cancellation that came after the answer (or for a request
		// never made) is passed over: a later request with the id (MCP
		// forbids it) is answered.
		{"a cancellation of no request in flight", []string{cancel("5"), request("5")}, answer("5"), false},
		{"a request of the server's with that id", []string{request("6"), cancel("6")}, `{"jsonrpc":"2.0","id":6,"method":"roots/list"}`, false},
		{"a notification", []string{request("6"), cancel("6")}, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":6}}`, false},
	} {
		var r requests
		for _, line := range tc.in {
			note(&r, line)
		}
		if got := r.answered([]byte(tc.out)); got != tc.dropped {
			t.Errorf("%s: dropped %v, want %v", tc.name, got, tc.dropped)
		}
		if tc.dropped && r.answered([]byte(tc.out)) {
			t.Errorf("%s: dropped twice: a request is answered once", tc.name)
		}
	}
	// An answer takes its request out of flight: a cancellation after it
	// marks nothing.
	var r requests
	note(&r, request("1"))
	if r.answered([]byte(answer("1"))) {
		t.Error("an answer to a request not cancelled was dropped")
	}
	note(&r, cancel("1"))
	if len(r.inFlight) != 0 {
		t.Errorf("in flight after the answer and a late cancellation: %v", r.inFlight)
	}
	// At most maxInFlight are followed.
	r = requests{}
	for i := range maxInFlight + 10 {
		note(&r, request(strconv.Itoa(i)))
	}
	if len(r.inFlight) != maxInFlight {
		t.Errorf("%d requests in flight, want %d", len(r.inFlight), maxInFlight)
	}
}
