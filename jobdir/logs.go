package jobdir

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Dropped is how many leading bytes of the log of stream the job in dir
// has had dropped by its --max-log-size cap (0: none).
func Dropped(dir, stream string) int64 {
	b, err := os.ReadFile(filepath.Join(dir, stream+".dropped"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return DecodeDropped(line)
}

// MarkMoved says whether the log f, of size bytes, no longer holds mark
// just before off: it was truncated, or replaced, since a reader got to
// off. The bytes below the dropped count, which the --max-log-size cap
// punched out, are not compared: dropped, read before, and on a mismatch
// the count the log's .dropped holds then (the cap records a drop before
// it punches the hole over what the count was read before: a mark
// compared with that hole is the cap's, not a truncation). Without a mark
// (or nothing more to read) only the size can tell. It is the scripts' bg_moved, with
// bg_markof's marks.
func MarkMoved(f *os.File, size, off int64, mark []byte, dropped int64) bool {
	if len(mark) == 0 || off <= dropped {
		return false
	}
	if size < off {
		return true
	}
	if size == off {
		return false
	}
	for {
		mark = mark[max(int64(len(mark))-(off-dropped), 0):]
		n := int64(len(mark))
		if n > off {
			return true
		}
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off-n); err != nil && err != io.EOF {
			return false
		}
		if bytes.Equal(b, mark) {
			return false
		}
		was := dropped
		dropped = Dropped(filepath.Dir(f.Name()), strings.TrimSuffix(filepath.Base(f.Name()), ".log"))
		if dropped <= was {
			return true
		}
		if off <= dropped {
			return false
		}
	}
}
