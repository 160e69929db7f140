package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"letters", "jjk", []string{"j", "j", "k"}},
		{"arrows", "\x1b[B\x1bOAq", []string{"\x1b[B", "\x1bOA", "q"}},
		{"esc then a key", "\x1b/", []string{"\x1b", "/"}},
		{"esc alone", "\x1b", []string{"\x1b"}},
		{"utf-8", "é\r", []string{"é", "\r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, splitKeys([]byte(tc.in))); d != "" {
				t.Errorf("splitKeys(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want byte
		ok   bool
	}{
		{`ctrl-\`, 0x1c, true}, {"ctrl-]", 0x1d, true}, {"^A", 0x01, true}, {"Ctrl-z", 0x1a, true},
		{"x", 0, false}, {"ctrl-", 0, false}, {"ctrl-1", 0, false}, {"ctrl-ab", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseKey(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseKey(%q) = %#x, %v; want %#x, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}
