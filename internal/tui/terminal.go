package tui

import (
	"fmt"
	"io"
	"os"
)

// Terminal is the terminal that top and attach take over, and what they
// need of the command line that runs them.
type Terminal struct {
	// In and Out are stdin and stdout, both terminals.
	In, Out *os.File
	// Stderr takes a job's stderr while attached.
	Stderr io.Writer
	// HostError says an error of the host as the command line says it
	// (naming the host); nil leaves errors as they are.
	HostError func(error) error
}

// hostError is err as the command line says it.
func (t Terminal) hostError(err error) error {
	if t.HostError == nil {
		return err
	}
	return t.HostError(err)
}

// ExitError ends top or attach with an exit status of its own: 129 when
// the terminal hung up (SIGHUP), 1 when top could not take the terminal
// back after an attach (Err says why).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit status bgjob ends with.
func (e *ExitError) ExitCode() int { return e.Code }
