package mcp

import (
	"strconv"
	"testing"
)

// The bookkeeping of cancelled requests: which answers are dropped.
func TestCancelledAnswers(t *testing.T) {
	var c cancelled
	cancel := func(id string) {
		c.note([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`))
	}
	answer := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	for _, tc := range []struct {
		name, cancel, request, msg string
		dropped                    bool
	}{
		{"the answer to a cancelled request", "7", "", answer("7"), true},
		{"an error, the id a string", `"a"`, "", `{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"x"}}`, true},
		{"the id written otherwise", "7", "", answer("7.0"), true},
		{"the result before the id", "9", "", `{"jsonrpc":"2.0","result":{"x":[1,{"id":1}]},"id":9}`, true},
		{"another id", "7", "", answer("8"), false},
		{"a string that is not the number", "7", "", answer(`"7"`), false},
		{"the id reused by a new request", "5", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, answer("5"), false},
		{"a request of the server's with that id", "6", "", `{"jsonrpc":"2.0","id":6,"method":"roots/list"}`, false},
		{"a notification", "6", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":6}}`, false},
	} {
		c = cancelled{}
		cancel(tc.cancel)
		if tc.request != "" {
			c.note([]byte(tc.request))
		}
		if got := c.answered([]byte(tc.msg)); got != tc.dropped {
			t.Errorf("%s: dropped %v, want %v", tc.name, got, tc.dropped)
		}
		if tc.dropped && c.answered([]byte(tc.msg)) {
			t.Errorf("%s: dropped twice: a request is answered once", tc.name)
		}
	}
	// Cancellations of requests already answered are forgotten beyond a
	// bound.
	c = cancelled{}
	for i := range maxCancelled + 10 {
		cancel(strconv.Itoa(i))
	}
	if n := c.n.Load(); n > maxCancelled || n == 0 {
		t.Errorf("%d cancellations remembered, want 1 to %d", n, maxCancelled)
	}
}
