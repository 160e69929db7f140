package mcp

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestCleanMax(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		raw  bool
		max  int
		want string
		used int
	}{
		{"plain", "abc\n", false, -1, "abc\n", 4},
		{"colours", "a\x1b[1;31mred\x1b[0m\r\n", false, -1, "ared\n", 17},
		{"raw keeps colours", "a\x1b[31mb", true, -1, "a\x1b[31mb", 7},
		{"osc title", "\x1b]0;title\x07x", false, -1, "x", 11},
		{"invalid bytes", "a\xff\xfeb", false, -1, `a\xff\xfeb`, 4},
		{"utf-8 kept", "é€\n", false, -1, "é€\n", 6},
		{"budget stops before an escape", "ab\xff", false, 5, "ab", 2},
		{"budget at a character", "aé", false, 2, "a", 1},
		{"escapes cost nothing", "\x1b[31m\x1b[0mab", false, 2, "ab", 11},
		{"lone ESC at the end", "a\x1b", false, -1, "a", 2},
		{"crs and sequences before text", "a\r\r\x1b[K\rb\r\x1b[K\r\n", false, -1, "a\r\r\rb\n", 14},
		{"budget in a run of crs", "\r\r\rx", false, 2, "\r\r", 2},
		{"a budget below the first character takes it whole", "\xffab", false, 1, `\xff`, 1},
		{"a budget below a 4-byte first character", "\x1b[1m\U0001d11ea", false, 2, "\U0001d11e", 8},
		{"no budget left", "ab", false, 0, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, used := cleanMax([]byte(tc.in), tc.raw, tc.max)
			if got != tc.want || used != tc.used {
				t.Errorf("cleanMax(%q, %v, %d) = %q, %d; want %q, %d", tc.in, tc.raw, tc.max, got, used, tc.want, tc.used)
			}
		})
	}
}

// A long run of carriage returns and sequences before text is looked at
// once, not once a byte.
func TestCleanLongCarriageReturnRuns(t *testing.T) {
	for _, unit := range []string{"\r", "\r\x1b[K"} {
		in := append(bytes.Repeat([]byte(unit), (4<<20)/len(unit)), 'x')
		done := make(chan string, 1)
		go func() { done <- clean(in, false) }()
		select {
		case out := <-done:
			if want := strings.Repeat("\r", (4<<20)/len(unit)) + "x"; out != want {
				t.Errorf("clean of %q runs: %d bytes, want %d", unit, len(out), len(want))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("clean of 4 MiB of %q and a byte of text took more than 30s", unit)
		}
	}
}

func TestCapTail(t *testing.T) {
	if got, cut := capTail("abcé", 3); got != "cé" || !cut {
		t.Errorf("capTail: %q %v", got, cut)
	}
	if got, cut := capTail("ab", 3); got != "ab" || cut {
		t.Errorf("capTail short: %q %v", got, cut)
	}
}
