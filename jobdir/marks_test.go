package jobdir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestMarkMovedHoleAfterDroppedRead: MarkMoved is bg_moved
// (shellgen's TestMovedHoleAfterDroppedRead, the same cases): a mark
// compared with the hole the --max-log-size cap punched after the
// reader read its dropped count is the cap's, not a truncation.
func TestMarkMovedHoleAfterDroppedRead(t *testing.T) {
	mark := bytes.Repeat([]byte("a"), 16)
	for _, tt := range []struct {
		name    string
		log     []byte
		dropped string
		moved   bool
	}{
		{"hole", append(make([]byte, 4096), "tail\n"...), "4096\n", false},
		{"truncated", append(make([]byte, 4096), "tail\n"...), "", true},
		{"same count", append(make([]byte, 4096), "tail\n"...), "0\n", true},
		{"above the drop", append(make([]byte, 64), bytes.Repeat([]byte("b"), 200)...), "64\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "stdout.log")
			if err := os.WriteFile(name, tt.log, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.dropped != "" {
				if err := os.WriteFile(filepath.Join(dir, "stdout.dropped"), []byte(tt.dropped), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := MarkMoved(f, int64(len(tt.log)), 100, mark, 0); got != tt.moved {
				t.Errorf("MarkMoved = %v, want %v", got, tt.moved)
			}
		})
	}
}
