//go:build !windows

package tui

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// keyReader reads what is typed on a terminal, and can be stopped while it
// waits: Close ends a Read blocked in it with io.EOF, and no byte typed
// after is taken from the terminal (the shell that gets it back reads it).
type keyReader struct {
	fd        int
	wake      *os.File // Close writes here, ending the poll
	wakeR     *os.File
	closeOnce sync.Once
}

func newKeyReader(f *os.File) (*keyReader, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &keyReader{fd: int(f.Fd()), wake: w, wakeR: r}, nil
}

func (k *keyReader) Read(p []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}, {Fd: int32(k.wakeR.Fd()), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, io.EOF
		}
		if fds[0].Revents&unix.POLLIN == 0 && fds[0].Revents != 0 {
			return 0, io.EOF
		}
		n, err := unix.Read(k.fd, p)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if n == 0 && err == nil {
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}

// Close ends a Read under way, and every later one.
func (k *keyReader) Close() error {
	k.closeOnce.Do(func() { k.wake.Close() })
	return nil
}

// notifyResize sends on c when the terminal's window changes size
// (SIGWINCH); stop ends that.
func notifyResize(c chan<- os.Signal) (stop func()) {
	signal.Notify(c, syscall.SIGWINCH)
	return func() { signal.Stop(c) }
}

// notifyQuit sends on c when the terminal's quit key (Ctrl-\) is typed
// while it is not raw (SIGQUIT), and holds the signal's default action
// (a core dump) off; stop ends that.
func notifyQuit(c chan<- os.Signal) (stop func()) {
	signal.Notify(c, syscall.SIGQUIT)
	return func() { signal.Stop(c) }
}

// notifyHangup sends on c when the terminal goes (SIGHUP); stop ends
// that. (SIGTERM and SIGINT end the command's context: see Main.)
func notifyHangup(c chan<- os.Signal) (stop func()) {
	signal.Notify(c, syscall.SIGHUP)
	return func() { signal.Stop(c) }
}
