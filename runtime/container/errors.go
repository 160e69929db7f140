package container

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNoSuchContainer is wrapped by Dial's error when the daemon runs no
	// container of that name or id.
	ErrNoSuchContainer = errors.New("no such container")
	// ErrNotRunning is wrapped by Dial's error when the container exists
	// but is not running (created, exited, paused).
	ErrNotRunning = errors.New("container is not running")
	// ErrNoShell is wrapped by Exec's error when the container could not
	// start sh at all: the image has no /bin/sh (or no sh on its PATH), or
	// the user docker://USER@C names is not in the container.
	ErrNoShell = errors.New("cannot start sh in the container")
	// ErrDaemon is wrapped by errors reaching the daemon: none listening,
	// a socket the user may not open, an address that cannot be used.
	ErrDaemon = errors.New("container daemon unreachable")
)

// Error is an error of a container host but a script's exit (ExitError):
// the container is absent or not running, cannot start sh, or its daemon
// cannot be reached (Err wraps ErrNoSuchContainer, ErrNotRunning,
// ErrNoShell or ErrDaemon), or the daemon failed otherwise. Its message
// names the host and says all there is to say ("docker://web: no such
// container"): such an error comes from the first script a verb runs, and
// a caller that finds it under its own wrapping may print it alone.
type Error struct {
	Host string
	Err  error
}

func (e *Error) Error() string { return e.Host + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// daemonError is an error of ErrDaemon's kind whose message says what
// went wrong, without repeating the kind.
type daemonError struct{ msg string }

func (e *daemonError) Error() string        { return e.msg }
func (e *daemonError) Is(target error) bool { return target == ErrDaemon }

// ExitError is returned by Exec when the script exited with a non-zero
// status (128+N when a signal N killed it, as the daemon reports it). Its
// message is the host, then Reason.
type ExitError struct {
	Host   string
	Status int
	Stderr string // the last lines the script wrote to stderr
}

func (e *ExitError) Error() string { return e.Host + ": " + e.Reason() }

// Reason is what ExitError's message says after the host: "script exited
// with status 3", then the end of its stderr.
func (e *ExitError) Reason() string {
	msg := fmt.Sprintf("script exited with status %d", e.Status)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// ExitCode returns the script's exit status.
func (e *ExitError) ExitCode() int { return e.Status }
