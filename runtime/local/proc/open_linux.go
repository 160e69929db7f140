package proc

import (
	"os"
	"syscall"
)

// Open opens name to read, as os.Open does, but outside Go's poller.
// On Linux os.Open offers every file to epoll: two fcntl calls, an
// epoll_ctl, which a regular file or a file of /proc refuses, and two
// fcntl calls more, and the first such file makes the poller (an epoll
// instance, an eventfd). A look reads a handful of small job files and
// logs, which never wait: a short verb's start paid for all that.
func Open(name string) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		// A blocking descriptor: os.NewFile leaves it out of the poller.
		return os.NewFile(uintptr(fd), name), nil
	}
}
