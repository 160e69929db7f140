package bgjob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bgjob/bgjob/internal/records"
)

// Sentinel errors callers can test with errors.Is, one for each Kind but
// KindOther. Each is an *Error, so every error of bgjob that wraps one has
// that kind (KindOf, errors.As); the *Error nearest may say more: the job,
// the host.
var (
	// ErrNotFound: no job has that id or name.
	ErrNotFound = sentinel(KindNotFound, "not found")
	// ErrBusy: the job still has live processes.
	ErrBusy = sentinel(KindBusy, "job is still running or has live processes")
	// ErrTimeout: Wait gave up.
	ErrTimeout = sentinel(KindTimeout, "timed out")
	// ErrUsage: the request itself is invalid (bad name, flag or value).
	ErrUsage = sentinel(KindUsage, "invalid request")
	// ErrForeignFiles: a job directory holds files bgjob did not write,
	// and was kept.
	ErrForeignFiles = sentinel(KindForeignFiles, "foreign files in job directory")
	// ErrExists: the job directory already exists.
	ErrExists = sentinel(KindExists, "job directory exists")
	// ErrRoot: the root or workspace directory is unsafe or cannot be made.
	ErrRoot = sentinel(KindRoot, "unusable root")
	// ErrHost: the host could not do what was asked (a file could not be
	// written, the wrapper did not start).
	ErrHost = sentinel(KindHost, "host failure")
	// ErrNoPTY: the host cannot run a job on a pseudo-terminal (Spec.PTY):
	// it lacks util-linux script(1) with -e and -E, setsid or /proc. No
	// job was created.
	ErrNoPTY = sentinel(KindNoPTY, "no pseudo-terminal job on this host")
	// ErrNoLogCap: the host cannot enforce a log cap (Spec.MaxLogSize):
	// its fallocate cannot punch holes (busybox's has no -p), or it has
	// none. No job was created.
	ErrNoLogCap = sentinel(KindNoLogCap, "no log size cap on this host")
	// ErrNoCgroup: per-job memory and CPU limits (Spec.Memory, CPUs) need
	// a cgroup of the job's own, which bgjob makes on no host yet: the
	// host says what it has. No job was created.
	ErrNoCgroup = sentinel(KindNoCgroup, "no per-job memory and CPU limits on this host")
	// ErrNoStdin: the job was not started with a stdin FIFO.
	ErrNoStdin = sentinel(KindNoStdin, "no input can be sent")
	// ErrEnded: the job has ended, or closed its input, before it took the
	// bytes sent.
	ErrEnded = sentinel(KindEnded, "input not delivered")
	// ErrCursorBusy: another reader holds the read cursor (logs --new
	// with the same reader).
	ErrCursorBusy = sentinel(KindCursorBusy, "cursor busy")
	// ErrReadOnly: the job directory cannot be changed.
	ErrReadOnly = sentinel(KindReadOnly, "read-only job directory")
	// ErrNoMatch: WaitFor saw the job end without a matching line.
	ErrNoMatch = sentinel(KindNoMatch, "ended without a matching line")
	// ErrNoAnswer: the host did not answer within the call's deadline
	// (Within, WithinAnswer, WithHostTimeout); what it did meanwhile
	// is unknown.
	ErrNoAnswer = sentinel(KindNoAnswer, "no answer")
	// ErrPortTaken: the TCP port a run asked for (Spec.Port) is taken, or
	// no port was free for Spec.AutoPort. No job was created.
	ErrPortTaken = sentinel(KindPortTaken, "port taken")
)

// Kind is the kind of a failure, what a caller branches on without reading
// the message. Its values are the "kind" of the CLI's --json errors.
type Kind string

// The kinds of bgjob's errors; each but KindOther has its sentinel.
const (
	KindOther        Kind = ""
	KindNotFound     Kind = "not_found"
	KindBusy         Kind = "busy"
	KindTimeout      Kind = "timeout"
	KindUsage        Kind = "usage"
	KindForeignFiles Kind = "foreign_files"
	KindExists       Kind = "exists"
	KindRoot         Kind = "root"
	KindHost         Kind = "host"
	KindNoPTY        Kind = "no_pty"
	KindNoLogCap     Kind = "no_log_cap"
	KindNoCgroup     Kind = "no_cgroup"
	KindNoStdin      Kind = "no_stdin"
	KindEnded        Kind = "ended"
	KindCursorBusy   Kind = "cursor_busy"
	KindReadOnly     Kind = "read_only"
	KindNoMatch      Kind = "no_match"
	KindNoAnswer     Kind = "no_answer"
	KindPortTaken    Kind = "port_taken"
)

// Error is an error of bgjob with its kind, and the job and host it is
// about when known, as *fs.PathError is with its operation and path. Its
// message is "HOST: " (with a Host), then "job REF: " (with a Ref), then
// Err, then the words of Kind's sentinel unless Err wraps it already, then
// " in workspace W" (with a Workspace).
// errors.Is(err, ErrX) holds for an Error of X's kind.
type Error struct {
	Kind Kind
	// Ref is the job the error is about, as the caller named it (id or
	// name), when the host refused it as such: "" otherwise.
	Ref string
	// Host is the host of a Fleet call ("" elsewhere).
	Host string
	// Workspace is where a job not found (ErrNotFound, with Ref) was
	// looked for: "job web: not found in workspace default".
	Workspace string
	// Err says what happened.
	Err error
}

// sentinel returns the sentinel of kind k, whose message is msg.
func sentinel(k Kind, msg string) error { return &Error{Kind: k, Err: errors.New(msg)} }

// sentinels holds the sentinel of each kind.
var sentinels = map[Kind]*Error{}

func init() {
	for _, e := range []error{ErrNotFound, ErrBusy, ErrTimeout, ErrUsage, ErrForeignFiles, ErrExists, ErrRoot, ErrHost,
		ErrNoPTY, ErrNoLogCap, ErrNoCgroup, ErrNoStdin, ErrEnded, ErrCursorBusy, ErrReadOnly, ErrNoMatch, ErrNoAnswer, ErrPortTaken} {
		s := e.(*Error)
		sentinels[s.Kind] = s
	}
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Host != "" {
		b.WriteString(e.Host + ": ")
	}
	if e.Ref != "" {
		b.WriteString("job " + e.Ref + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if s := sentinels[e.Kind]; s != nil && s != e && !errors.Is(e.Err, s) {
		if e.Err != nil {
			b.WriteString(": ")
		}
		b.WriteString(s.Err.Error())
	}
	if e.Workspace != "" {
		b.WriteString(" in workspace " + e.Workspace)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	s := sentinels[e.Kind]
	return s != nil && target == s
}

// KindOf returns the kind of err: that of the first *Error in its chain
// that has one, else KindOther (a failure in transit, of the caller's
// context, or not bgjob's).
func KindOf(err error) Kind {
	var e *Error
	for errors.As(err, &e) {
		if e.Kind != KindOther {
			return e.Kind
		}
		err = e.Err
	}
	return KindOther
}

// IsAnswer reports whether err is an answer to a call: a failure of some
// kind the host reported, or one found before it was asked; not a failure
// to reach the host (a dropped connection, no answer in time). A caller
// that keeps a connection goes on using it after an answer.
func IsAnswer(err error) bool {
	k := KindOf(err)
	return k != KindOther && k != KindNoAnswer
}

// hostError returns err as the error of host in a Fleet call, of err's
// kind: err itself when it names host already (Within's).
func hostError(host string, err error) error {
	if e, ok := err.(*Error); ok && host != "" && e.Host == host {
		return err
	}
	return &Error{Kind: KindOf(err), Host: host, Err: err}
}

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

// saidKind returns the kind of a refusal whose subject is the host's own
// words; false for the others.
func saidKind(kind string) (Kind, bool) {
	switch kind {
	case records.ErrKindExists:
		return KindExists, true
	case records.ErrKindRoot:
		return KindRoot, true
	case records.ErrKindIO, records.ErrKindStart, records.ErrKindSetsid:
		return KindHost, true
	case records.ErrKindNoPTY:
		return KindNoPTY, true
	case records.ErrKindNoCap:
		return KindNoLogCap, true
	case records.ErrKindNoCgroup:
		return KindNoCgroup, true
	case records.ErrKindNoStdin:
		return KindNoStdin, true
	case records.ErrKindEnded:
		return KindEnded, true
	case records.ErrKindTimeout:
		return KindTimeout, true
	case records.ErrKindCursorBusy:
		return KindCursorBusy, true
	}
	return KindOther, false
}

// refusal turns a script's refusal record into an *Error of its kind: the
// job it names as Ref, or the host's words as Err.
func refusal(kind, subject string) error {
	if k, ok := saidKind(kind); ok {
		return &Error{Kind: k, Err: errors.New(subject)}
	}
	switch kind {
	case records.ErrKindNotFound:
		return &Error{Kind: KindNotFound, Ref: subject, Err: ErrNotFound}
	case records.ErrKindSymlink:
		return &Error{Kind: KindNotFound, Ref: subject, Err: fmt.Errorf("%w: its directory is a symbolic link, which bgjob never follows", ErrNotFound)}
	case records.ErrKindBusy:
		return &Error{Kind: KindBusy, Ref: subject, Err: fmt.Errorf("%w (stop it first, or use --force)", ErrBusy)}
	case records.ErrKindCwd:
		return fmt.Errorf("%w: %s", ErrUsage, subject)
	case records.ErrKindNotEmpty:
		return fmt.Errorf("job directory %s holds files bgjob did not write: removed nothing: %w", subject, ErrForeignFiles)
	case records.ErrKindOutside:
		return fmt.Errorf("%s is not a job directory under the root: %w", subject, ErrUsage)
	case records.ErrKindReadOnly:
		return fmt.Errorf("job directory %s cannot be changed (read-only file system or directory): %w", subject, ErrReadOnly)
	case records.ErrKindNameBusy:
		return fmt.Errorf("name %s: another run --replace of it has held its lock too long: %w", subject, ErrBusy)
	case records.ErrKindPortTaken:
		port, holder, _ := strings.Cut(subject, " ")
		if holder == "" {
			holder = "a process bgjob cannot name"
		}
		return &Error{Kind: KindPortTaken, Err: fmt.Errorf("%w: %s holds port %s", ErrPortTaken, holder, port)}
	case records.ErrKindNoPort:
		return &Error{Kind: KindPortTaken, Err: fmt.Errorf("%w: no free TCP port in %s", ErrPortTaken, subject)}
	case records.ErrKindRegex:
		return fmt.Errorf("%w: the host's grep -E cannot compile %q", ErrUsage, subject)
	}
	return &Error{Kind: KindHost, Err: fmt.Errorf("%s (%s)", subject, kind)}
}
