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
	fd, err := OpenFd(name, 0)
	if err != nil {
		return nil, err
	}
	// A blocking descriptor: os.NewFile leaves it out of the poller.
	return os.NewFile(uintptr(fd), name), nil
}

// OpenFd opens name to read, with flags besides O_RDONLY|O_CLOEXEC, and
// returns its descriptor alone, for a read that needs no os.File (a look
// reads a few small files of each of thousands of jobs).
func OpenFd(name string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|flags, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return fd, nil
	}
}
