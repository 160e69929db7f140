//go:build !windows

package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// whileRead returns a context that is cancelled when the reader of w goes
// away: when w is a pipe or socket whose other end is closed (the grep of
// "bgjob logs -f ID | grep -m1 ready" has exited). It notices at once, not
// at the next write, which may never come for a job that has gone quiet.
// stop ends the watch; the context is cancelled then too.
func whileRead(ctx context.Context, w io.Writer) (_ context.Context, gone func() bool, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	f, ok := fileOf(w)
	if !ok {
		return ctx, func() bool { return false }, cancel
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return ctx, func() bool { return false }, cancel
	}
	// The watch also wakes when stop closes the write end of this pipe.
	pr, pw, err := os.Pipe()
	if err != nil {
		return ctx, func() bool { return false }, cancel
	}
	closed := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pr.Close()
		fds := []unix.PollFd{{Fd: int32(f.Fd())}, {Fd: int32(pr.Fd()), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				close(closed)
				cancel()
				return
			}
		}
	}()
	gone = func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	}
	return ctx, gone, func() {
		pw.Close()
		<-done
		cancel()
	}
}

// pipeUnread returns, when w is a pipe, a function that says how many of
// the bytes written to w its reader has not read yet, and whether that
// reader has gone (so it never will); nil for any other writer: a file or
// a terminal takes what is written. logs --new moves its cursor over
// what was read, not what was written (bgjob.Cursor.Unread). Only
// Linux tells a pipe's writer what is unread (FIONREAD); elsewhere it is
// nil.
func pipeUnread(w io.Writer) func() (int64, bool) {
	f, ok := fileOf(w)
	if !ok || fionread == 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	fd := int(f.Fd())
	return func() (int64, bool) {
		n, err := unix.IoctlGetInt(fd, fionread)
		if err != nil {
			return 0, false
		}
		fds := []unix.PollFd{{Fd: int32(fd)}}
		if _, err := unix.Poll(fds, 0); err != nil {
			return int64(n), false
		}
		return int64(n), fds[0].Revents&unix.POLLERR != 0
	}
}

// quietPipe makes a write to stdout or stderr whose reader has gone fail
// with EPIPE, rather than kill bgjob with SIGPIPE, until the function it
// returns is called: logs --new then reports what its reader took.
func quietPipe() func() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGPIPE)
	return func() { signal.Stop(c) }
}
