package bgjob_test

import (
	"testing"

	"github.com/bgjob/bgjob"
)

// TestParsePTYSize: COLSxROWS, either case of x, each side 1 to
// bgjob.MaxPTYSide; anything else is refused, naming what was given.
func TestParsePTYSize(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		cols, rows int
		ok         bool
	}{
		{"plain", "120x40", 120, 40, true},
		{"upper x", "80X24", 80, 24, true},
		{"largest", "10000x10000", 10000, 10000, true},
		{"smallest", "1x1", 1, 1, true},
		{"zero", "0x24", 0, 0, false},
		{"too wide", "10001x24", 0, 0, false},
		{"negative", "-1x24", 0, 0, false},
		{"no x", "120", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"words", "wide", 0, 0, false},
		{"one side", "120x", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, rows, err := bgjob.ParsePTYSize(tc.in)
			if ok := err == nil; ok != tc.ok || cols != tc.cols || rows != tc.rows {
				t.Errorf("ParsePTYSize(%q) = %d, %d, %v; want %d, %d, ok %v", tc.in, cols, rows, err, tc.cols, tc.rows, tc.ok)
			}
		})
	}
}
