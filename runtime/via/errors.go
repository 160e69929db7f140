package via

import (
	"fmt"
	"os/exec"
	"strings"
)

// Error is an error of reaching the host but a script's exit (ExitError):
// a command that cannot be split or run, or that ended before the host's
// shell started (it says what the command wrote on stderr). Its message
// is the host, then what went wrong: "web-0: kubectl exited with status
// 1 before the host's sh started: error: pods "web-0" not found".
type Error struct {
	Host string
	Err  error
}

func (e *Error) Error() string { return e.Host + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitError is returned by Exec when the script exited with a non-zero
// status (128+N when a signal N killed the command here; a command such
// as ssh exits with its own status, 255, when it loses the host). Its
// message is the host, then Reason.
type ExitError struct {
	Host   string
	Status int
	Stderr string // the last lines the script (and the command) wrote to stderr
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

// exitStatus is the status of a command that exited, 128+N when signal N
// killed it.
func exitStatus(e *exec.ExitError) int {
	if c := e.ExitCode(); c >= 0 {
		return c
	}
	return 128 + signalOf(e)
}

// CutError is the error of an Exec whose ctx ended before the host's
// shell started, while the command had said something on stderr (a
// password prompt, a login that waits): it wraps the ctx's error.
type CutError struct {
	Err    error
	Stderr string
}

func (e *CutError) Error() string { return e.Err.Error() + ": the command said: " + e.Stderr }
func (e *CutError) Unwrap() error { return e.Err }

// Said returns what the command said.
func (e *CutError) Said() string { return e.Stderr }
