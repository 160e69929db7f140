package tui

import (
	"io"
	"os"
)

// keyReader on Windows reads the console as a file: Close does not end a
// Read under way, which ends with the next key.
type keyReader struct {
	f      *os.File
	closed chan struct{}
}

func newKeyReader(f *os.File) (*keyReader, error) {
	return &keyReader{f: f, closed: make(chan struct{})}, nil
}

func (k *keyReader) Read(p []byte) (int, error) {
	select {
	case <-k.closed:
		return 0, io.EOF
	default:
	}
	return k.f.Read(p)
}

func (k *keyReader) Close() error {
	select {
	case <-k.closed:
	default:
		close(k.closed)
	}
	return nil
}

// notifyResize on Windows does nothing: the console sends no SIGWINCH.
func notifyResize(chan<- os.Signal) (stop func()) { return func() {} }

// notifyQuit on Windows does nothing: there is no SIGQUIT.
func notifyQuit(chan<- os.Signal) (stop func()) { return func() {} }

// notifyHangup on Windows does nothing: there is no SIGHUP.
func notifyHangup(chan<- os.Signal) (stop func()) { return func() {} }
