// Package tail keeps the end of a stream: what a runtime quotes of a
// script's stderr when the script fails.
package tail

import (
	"bytes"
	"sync"
)

// Buffer keeps the last Max bytes written to it.
type Buffer struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// LastLines returns up to n trailing lines.
func (t *Buffer) LastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimRight(t.buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
