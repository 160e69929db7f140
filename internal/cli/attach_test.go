package cli

import "testing"

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
