package mcp

import "testing"

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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, used := cleanMax([]byte(tc.in), tc.raw, tc.max)
			if got != tc.want || used != tc.used {
				t.Errorf("cleanMax(%q, %v, %d) = %q, %d; want %q, %d", tc.in, tc.raw, tc.max, got, used, tc.want, tc.used)
			}
		})
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
