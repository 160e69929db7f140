package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
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

// DefaultGrace is how long Stop waits after the first signal before SIGKILL.
const DefaultGrace = 2 * time.Second

// NoGrace, as a Grace, sends KILL right after the first signal (a Grace of
// 0 means DefaultGrace).
const NoGrace time.Duration = -1

// Client runs and inspects jobs in one workspace of one host.
type Client struct {
	rt        Runtime
	root      string
	workspace string
	pruneKeep int
	pruneAge  time.Duration
	// pruneEvery: one run in pruneEvery starts the pruning pass.
	pruneEvery int
}

// NewClient returns a client for workspace (jobdir.DefaultWorkspace when
// "") under root ("" for the host's default, /tmp/bgjob-$UID) on rt.
func NewClient(rt Runtime, root, workspace string) (*Client, error) {
	if workspace == "" {
		workspace = jobdir.DefaultWorkspace
	}
	if err := jobdir.ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if root != "" && !strings.HasPrefix(root, "/") {
		return nil, fmt.Errorf("%w: root %q must be an absolute path", ErrUsage, root)
	}
	if root != "" {
		// "/x/link/" would name the directory a link points to, and pass
		// the check that refuses a root that is a link.
		root = path.Clean(root)
	}
	if d, ok := rt.(interface{ DefaultRoot() string }); ok && root == "" {
		// The runtime knows the host's default: no need for the script
		// to ask the host.
		root = d.DefaultRoot()
	}
	return &Client{rt: rt, root: root, workspace: workspace, pruneKeep: DefaultKeep, pruneAge: DefaultMaxAge, pruneEvery: DefaultPruneEvery}, nil
}

func (c *Client) target() shellgen.Target {
	return shellgen.Target{Root: c.root, Workspace: c.workspace}
}

// exec runs script on the host and hands what it reports to rp. The
// script's stdin is stdin; with watch (and no stdin) it stays open until
// exec returns or ctx ends, so that scripts that wait notice when their
// caller goes away. A script that has printed its end marker is left to
// exit by itself, so that what it started in the background (run's
// pruning pass) lives on; one that is cut short is ended.
func (c *Client) exec(ctx context.Context, script string, stdin io.Reader, watch bool, rp reply) error {
	return c.execCommits(ctx, script, stdin, watch, rp, nil)
}

// execCommits is exec for a read with a cursor when cm is not nil: cm is
// the script's stdin, and a read that ends early (an error, ctx done)
// first reports what was delivered, then lets the script end by itself
// (its output is closed, so it ends at its next write), and cuts it only
// after commitGrace: cutting it at once could kill the host's committer
// before it has read the report.
func (c *Client) execCommits(ctx context.Context, script string, stdin io.Reader, watch bool, rp reply, cm *commits) error {
	parent := ctx
	if cm != nil {
		ctx, stdin = context.WithoutCancel(ctx), cm
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if watch && stdin == nil {
		stdin = ctxReader{sctx}
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		pw.CloseWithError(c.rt.Exec(sctx, script, stdin, pw))
		close(done)
	}()
	// end ends the script early: with cm, gently.
	end := cancel
	if cm != nil {
		end = func() {
			if !cm.finish(done) {
				cancel()
				return
			}
			pr.CloseWithError(context.Canceled)
			t := time.AfterFunc(commitGrace, cancel)
			<-done
			t.Stop()
		}
		defer cm.finish(done)
		defer context.AfterFunc(parent, func() { go end() })()
		rp.sent = func() error { return cm.sent(done) }
	}
	stopped, err := rp.handler(c.rt.Host()).Decode(pr)
	if err != nil || stopped {
		end()
	}
	pr.Close()
	<-done
	if parent.Err() != nil {
		return parent.Err()
	}
	return err
}

// ctxReader blocks until its context ends, then reports EOF.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
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
