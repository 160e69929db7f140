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
	ErrBusy = errors.New("job is still running")
	// ErrTimeout: Wait gave up.
	ErrTimeout = errors.New("timed out")
	// ErrUsage: the request itself is invalid (bad name, flag or value).
	ErrUsage = errors.New("invalid request")
)

// DefaultGrace is how long Stop waits after the first signal before SIGKILL.
const DefaultGrace = 2 * time.Second

// Client runs and inspects jobs in one workspace of one host.
type Client struct {
	rt        Runtime
	root      string
	workspace string
	pruneKeep int
	pruneAge  time.Duration
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
	return &Client{rt: rt, root: root, workspace: workspace, pruneKeep: DefaultKeep, pruneAge: DefaultMaxAge}, nil
}

func (c *Client) target() shellgen.Target {
	return shellgen.Target{Root: c.root, Workspace: c.workspace}
}

// exec runs script and hands each event it reports to fn. With watch set,
// the script's stdin stays open until exec returns or ctx ends, so that
// scripts that wait notice when their caller goes away.
func (c *Client) exec(ctx context.Context, script string, watch bool, fn func(shellgen.Event) error) error {
	if !watch {
		return c.execStdin(ctx, script, nil, fn)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return c.execStdin(ctx, script, ctxReader{ctx}, fn)
}

// execStdin is exec with the script's stdin given.
func (c *Client) execStdin(ctx context.Context, script string, stdin io.Reader, fn func(shellgen.Event) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := c.rt.Exec(ctx, script, stdin, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	early := false
	derr := shellgen.Decode(pr, func(ev shellgen.Event) error {
		err := fn(ev)
		early = errors.Is(err, shellgen.ErrStop)
		return err
	})
	stopped := derr == nil
	if derr != nil || early {
		// The rest of the script's work is unwanted: end it. A script
		// that reached its end marker is left to exit by itself, so
		// what it started in the background (run's pruning) lives on.
		cancel()
	}
	pr.Close()
	xerr := <-errc
	switch {
	case derr != nil && xerr != nil && !errors.Is(xerr, context.Canceled):
		return xerr
	case derr != nil:
		if errors.Is(derr, shellgen.ErrTruncated) && ctx.Err() != nil {
			return ctx.Err()
		}
		return derr
	case xerr != nil && !stopped:
		return xerr
	}
	return nil
}

// ctxReader blocks until its context ends, then reports EOF.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}

func (c *Client) derive(o *jobdir.Observation) jobdir.Job {
	return jobdir.Derive(*o, c.rt.Host())
}

// refError turns a script's refusal into an error wrapping a sentinel.
func refError(e *shellgen.RefError) error {
	switch e.Kind {
	case "notfound":
		return fmt.Errorf("job %s: %w", e.Subject, ErrNotFound)
	case "busy":
		return fmt.Errorf("job %s: %w (stop it first, or use --force)", e.Subject, ErrBusy)
	case "cwd":
		return fmt.Errorf("%w: %s", ErrUsage, e.Subject)
	case "notempty":
		return fmt.Errorf("job directory %s holds files bgjob did not write: removed bgjob's files, kept the rest", e.Subject)
	case "outside":
		return fmt.Errorf("%s is not a job directory under the root", e.Subject)
	}
	return errors.New(e.Subject)
}
