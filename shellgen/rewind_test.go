package shellgen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMovedHoleAfterDroppedRead: a mark compared with the hole the
// --max-log-size cap punched after the reader read its dropped count is
// the cap's, not a truncation: bg_moved reads the count again on a
// mismatch. (Go's jobdir.MarkMoved is held to the same cases.)
func TestMovedHoleAfterDroppedRead(t *testing.T) {
	mark := bytes.Repeat([]byte("a"), 16)
	for _, tt := range []struct {
		name    string
		log     []byte
		dropped string // the .dropped file now ("": none)
		moved   bool
	}{
		// Dropped 4096 since the count (0) was read: the mark's bytes are
		// in the hole.
		{"hole", append(make([]byte, 4096), "tail\n"...), "4096\n", false},
		// No drop since: zeros where the mark was are a truncation.
		{"truncated", append(make([]byte, 4096), "tail\n"...), "", true},
		{"same count", append(make([]byte, 4096), "tail\n"...), "0\n", true},
		// A drop that leaves the mark's place above the count: its bytes
		// tell.
		{"above the drop", append(make([]byte, 64), bytes.Repeat([]byte("b"), 200)...), "64\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "stdout.log")
			if err := os.WriteFile(f, tt.log, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.dropped != "" {
				if err := os.WriteFile(filepath.Join(dir, "stdout.dropped"), []byte(tt.dropped), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			call := fmt.Sprintf("if bg_moved '%s' 100 %x 0; then echo moved; else echo kept; fi\n", f, mark)
			out, err := exec.Command("sh", "-c", library().closure(call)+call).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			want := "kept\n"
			if tt.moved {
				want = "moved\n"
			}
			if string(out) != want {
				t.Errorf("bg_moved says %q, want %q", out, want)
			}
		})
	}
}
