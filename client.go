package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

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

// ClientOption configures a Client as NewClient makes it.
type ClientOption func(*Client)

// NewClient returns a client for workspace (jobdir.DefaultWorkspace when
// "") under root ("" for the host's default, /tmp/bgjob-$UID) on rt,
// configured by opts (none: Run prunes as DefaultKeep, DefaultMaxAge and
// DefaultPruneEvery say).
func NewClient(rt Runtime, root, workspace string, opts ...ClientOption) (*Client, error) {
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
	if d, ok := rt.(DefaultRooter); ok && root == "" {
		// The runtime knows the host's default: no need for the script
		// to ask the host.
		root = d.DefaultRoot()
	}
	c := &Client{rt: rt, root: root, workspace: workspace, pruneKeep: DefaultKeep, pruneAge: DefaultMaxAge, pruneEvery: DefaultPruneEvery}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// InWorkspace returns a client for another workspace of the same host, with
// this one's settings: a caller that lists every workspace acts on a job
// of another through it.
func (c *Client) InWorkspace(workspace string) (*Client, error) {
	if err := jobdir.ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	d := *c
	d.workspace = workspace
	return &d, nil
}

func (c *Client) target() shellgen.Target {
	return shellgen.Target{Root: c.root, Workspace: c.workspace}
}

// exec runs script on the host and hands what it reports to h. The
// script's stdin is stdin; with watch (and no stdin) it stays open until
// exec returns or ctx ends, so that scripts that wait notice when their
// caller goes away. A script that has printed its end marker is left to
// exit by itself, so that what it started in the background (run's
// pruning pass) lives on, and exec returns then, without waiting for the
// runtime to see it exit; one that is cut short is ended.
func (c *Client) exec(ctx context.Context, script string, stdin io.Reader, watch bool, h records.Handler) error {
	return c.execCommits(ctx, c.script(script), stdin, watch, h, nil, false)
}

// execLaunch is exec for a launch script: an end of ctx is not a cut. The
// script's output is no longer read, and with watch its stdin ends (a
// --replace launch that still waits for its name's lock ends there,
// launch_replace.sh), but the script is left to end by itself, and cut
// only after commitGrace: cut where it was, between making its job's
// directory and its wrapper's report, it left the directory half made,
// without meta.json, unseen for a minute. A launch takes milliseconds; it
// ends with its job started, or with what it made removed.
func (c *Client) execLaunch(ctx context.Context, req shellgen.Request, watch bool, h records.Handler) error {
	return c.execCommits(ctx, c.request(req), nil, watch, h, nil, true)
}

// execCommits is exec for a read with a cursor when cm is not nil: cm is
// the script's stdin, and a read that ends early (an error, ctx done)
// first reports what was delivered, then lets the script end by itself
// (its output is closed, so it ends at its next write), and cuts it only
// after commitGrace: cutting it at once could kill the host's committer
// before it has read the report. With settle (execLaunch) an end of ctx
// lets the script end by itself too.
func (c *Client) execCommits(ctx context.Context, run runner, stdin io.Reader, watch bool, h records.Handler, cm *commits, settle bool) error {
	parent := ctx
	if cm != nil {
		stdin = cm
	}
	// The script's context ends with ctx only until the script has
	// printed its end marker (unhook): then it is left to exit by itself.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	detached := false
	defer func() {
		if !detached {
			cancel()
		}
	}()
	pr, pw := io.Pipe()
	unhook := func() bool { return false }
	switch {
	case settle:
		unhook = context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
		if watch && stdin == nil {
			stdin = ctxReader{ctx}
		}
	case cm == nil:
		unhook = context.AfterFunc(ctx, cancel)
	}
	if watch && stdin == nil {
		stdin = ctxReader{sctx}
	}
	done := make(chan struct{})
	out := &countWriter{w: pw}
	var xerr error
	go func() {
		xerr = run(sctx, stdin, out)
		pw.CloseWithError(xerr)
		close(done)
	}()
	// end ends the script early: with cm or settle, gently.
	end := cancel
	if settle {
		end = func() {
			t := time.AfterFunc(commitGrace, cancel)
			<-done
			t.Stop()
		}
	}
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
		h.Sent = func() error { return cm.sent(done) }
	}
	stopped, err := answering(parent, h).Decode(pr)
	if err != nil || stopped {
		end()
	}
	pr.Close()
	if err == nil && !stopped && unhook() {
		// The end marker: all the script reports is in. The caller does
		// not wait for the runtime to see the script exit (a container's
		// stream to close and its exec inspect, an SSH session's exit
		// status), whose status no verb reads once the output is whole.
		detached = true
		go func() {
			<-done
			cancel()
		}()
		return nil
	}
	<-done
	if parent.Err() != nil {
		return keepSaid(parent.Err(), xerr)
	}
	if err != nil && xerr != nil && out.n.Load() == 0 && errors.Is(err, xerr) {
		// The script wrote nothing: the runtime's error (a container
		// that is not there, a daemon that does not answer) says it all.
		return whole{xerr}
	}
	return err
}

// whole is a runtime's error met before its script wrote anything (a
// container that is not there, a daemon that does not answer): its
// message names the host and says all, so a verb returns it as it is,
// never under its own words (doing).
type whole struct{ error }

func (e whole) Unwrap() error { return e.error }

// doing returns err under what the verb was doing, "starting job: …",
// unless it is the runtime's own (whole), which says all.
func doing(what string, err error) error {
	if errors.As(err, new(whole)) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// jobs returns a records.Handler's Job that hands fn each job observed,
// derived on the client's host (jobdir.Derive).
func (c *Client) jobs(fn func(j jobdir.Job, outcome string) error) func(jobdir.Observation, string) error {
	host := c.rt.Host()
	return func(o jobdir.Observation, outcome string) error { return fn(jobdir.Derive(o, host), outcome) }
}

// refused returns a records.Handler's Refused that hands fn each refusal
// as an error wrapping its sentinel (see refusal); a job not found names
// the client's workspace, where it was looked for.
func (c *Client) refused(fn func(error) error) func(kind, subject string) error {
	return func(kind, subject string) error {
		err := refusal(kind, subject)
		if e, ok := err.(*Error); ok && kind == records.ErrKindNotFound {
			e.Workspace = c.workspace
		}
		return fn(err)
	}
}

// gather returns a records.Handler's Refused that appends each refusal,
// as an error, to errs.
func (c *Client) gather(errs *[]error) func(kind, subject string) error {
	return c.refused(func(err error) error { *errs = append(*errs, err); return nil })
}

// ctxReader blocks until its context ends, then reports EOF.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}
