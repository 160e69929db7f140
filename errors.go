package bgjob

import (
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/shellgen"
)

// Sentinel errors callers can test with errors.Is.
var (
	// ErrNotFound: no job has that id or name.
	ErrNotFound = errors.New("not found")
	// ErrBusy: the job still has live processes.
	ErrBusy = errors.New("job is still running or has live processes")
	// ErrTimeout: Wait gave up.
	ErrTimeout = errors.New("timed out")
	// ErrUsage: the request itself is invalid (bad name, flag or value).
	ErrUsage = errors.New("invalid request")
	// ErrForeignFiles: a job directory holds files bgjob did not write,
	// and was kept.
	ErrForeignFiles = errors.New("foreign files in job directory")
	// ErrExists: the job directory already exists.
	ErrExists = errors.New("job directory exists")
	// ErrRoot: the root or workspace directory is unsafe or cannot be made.
	ErrRoot = errors.New("unusable root")
	// ErrHost: the host could not do what was asked (a file could not be
	// written, the wrapper did not start).
	ErrHost = errors.New("host failure")
	// ErrNoPTY: the host cannot run a job on a pseudo-terminal (Spec.PTY):
	// it lacks util-linux script(1) with -e and -E, setsid or /proc. No
	// job was created.
	ErrNoPTY = errors.New("no pseudo-terminal job on this host")
	// ErrNoLogCap: the host cannot enforce a log cap (Spec.MaxLogSize):
	// its fallocate cannot punch holes (busybox's has no -p), or it has
	// none. No job was created.
	ErrNoLogCap = errors.New("no log size cap on this host")
	// ErrNoStdin: the job was not started with a stdin FIFO.
	ErrNoStdin = errors.New("no input can be sent")
	// ErrEnded: the job has ended, or closed its input, before it took the
	// bytes sent.
	ErrEnded = errors.New("input not delivered")
	// ErrCursorBusy: another reader holds the read cursor (logs --new
	// with the same reader).
	ErrCursorBusy = errors.New("cursor busy")
	// ErrReadOnly: the job directory cannot be changed.
	ErrReadOnly = errors.New("read-only job directory")
	// ErrNoMatch: WaitFor saw the job end without a matching line.
	ErrNoMatch = errors.New("ended without a matching line")
	// ErrNoAnswer: the host did not answer within the call's deadline
	// (Within, Fleet.SetHostTimeout); what it did meanwhile is unknown.
	ErrNoAnswer = errors.New("no answer")
)

// HostError is the error of one host in a Fleet call.
type HostError struct {
	Host string
	Err  error
}

func (e *HostError) Error() string { return e.Host + ": " + e.Err.Error() }
func (e *HostError) Unwrap() error { return e.Err }

// IgnoreNotFound returns err, as Stop or Status return it (one error per
// job), without its parts that wrap ErrNotFound: nil when no other is
// left. A caller that stops jobs it named earlier uses it for those
// removed since.
func IgnoreNotFound(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			if !errors.Is(e, ErrNotFound) {
				errs = append(errs, e)
			}
		}
		return errors.Join(errs...)
	}
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// refusal turns a script's refusal record into an error wrapping its
// sentinel.
func refusal(kind, subject string) error {
	switch kind {
	case shellgen.ErrKindNotFound:
		return fmt.Errorf("job %s: %w", subject, ErrNotFound)
	case shellgen.ErrKindSymlink:
		return fmt.Errorf("job %s: %w: its directory is a symbolic link, which bgjob never follows", subject, ErrNotFound)
	case shellgen.ErrKindBusy:
		return fmt.Errorf("job %s: %w (stop it first, or use --force)", subject, ErrBusy)
	case shellgen.ErrKindCwd:
		return fmt.Errorf("%w: %s", ErrUsage, subject)
	case shellgen.ErrKindNotEmpty:
		return fmt.Errorf("job directory %s holds files bgjob did not write: removed nothing: %w", subject, ErrForeignFiles)
	case shellgen.ErrKindOutside:
		return fmt.Errorf("%s is not a job directory under the root: %w", subject, ErrUsage)
	case shellgen.ErrKindExists:
		return fmt.Errorf("%s: %w", subject, ErrExists)
	case shellgen.ErrKindRoot:
		return fmt.Errorf("%s: %w", subject, ErrRoot)
	case shellgen.ErrKindIO, shellgen.ErrKindStart, shellgen.ErrKindSetsid:
		return fmt.Errorf("%s: %w", subject, ErrHost)
	case shellgen.ErrKindNoPTY:
		return fmt.Errorf("%s: %w", subject, ErrNoPTY)
	case shellgen.ErrKindNoCap:
		return fmt.Errorf("%s: %w", subject, ErrNoLogCap)
	case shellgen.ErrKindNoStdin:
		return fmt.Errorf("%s: %w", subject, ErrNoStdin)
	case shellgen.ErrKindEnded:
		return fmt.Errorf("%s: %w", subject, ErrEnded)
	case shellgen.ErrKindTimeout:
		return fmt.Errorf("%s: %w", subject, ErrTimeout)
	case shellgen.ErrKindCursorBusy:
		return fmt.Errorf("%s: %w", subject, ErrCursorBusy)
	case shellgen.ErrKindReadOnly:
		return fmt.Errorf("job directory %s cannot be changed (read-only file system or directory): %w", subject, ErrReadOnly)
	case shellgen.ErrKindNameBusy:
		return fmt.Errorf("name %s: another run --replace of it has held its lock too long: %w", subject, ErrBusy)
	case shellgen.ErrKindRegex:
		return fmt.Errorf("%w: the host's grep -E cannot compile %q", ErrUsage, subject)
	}
	return fmt.Errorf("%s (%s): %w", subject, kind, ErrHost)
}
