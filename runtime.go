package bgjob

import (
	"context"
	"io"
)

// Runtime runs shellgen scripts on one host. runtime/local, runtime/ssh
// and runtime/container implement it; anything that can run "sh -c SCRIPT"
// on a host can (Example_runtime).
type Runtime interface {
	// Exec runs script with the host's POSIX shell, as "sh -c script". The
	// script reads stdin (empty when stdin is nil) and everything it writes
	// to its stdout is copied to stdout as it arrives. Exec returns once the
	// script has exited and its stdout is drained; it returns an error when
	// the script could not be run, exited non-zero (the error carries its
	// stderr), or the transport failed. Cancelling ctx ends the script;
	// the error then wraps ctx.Err(), and may have a method Said() string
	// that returns what the transport printed while the host's shell had
	// not started (a password prompt), which bgjob's host timeout error
	// quotes (Within).
	Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error
	// Host names the host: "" for the local machine, else the host as the
	// user gave it.
	Host() string
}

// Watcher is implemented by runtimes whose job files are on this machine
// (runtime/local). Wait and Logs with Follow then read the files directly
// and wake on file events instead of polling on the host.
type Watcher interface {
	// Watch sends the base name of files that change in dirs, until ctx
	// ends. It may drop names when the receiver is slow.
	Watch(ctx context.Context, dirs []string) (<-chan string, error)
}

// DefaultRooter is implemented by runtimes that know the host's default
// root without asking the host (runtime/local). NewClient uses it when
// given no root.
type DefaultRooter interface {
	// DefaultRoot returns the default root directory of all jobs on the
	// host, /tmp/bgjob-$UID.
	DefaultRoot() string
}

// Connection is implemented by runtimes that reach their host over a
// connection that can end (runtime/ssh). A caller that keeps a runtime
// for many calls (the MCP server) dials again once Done is closed.
type Connection interface {
	// Done returns a channel closed once the connection has ended; the
	// runtime then fails every call.
	Done() <-chan struct{}
}
