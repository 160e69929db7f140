package bgjob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// DefaultParallel is how many hosts a Fleet works on at once when not
// told otherwise, as parallel-ssh and pdsh.
const DefaultParallel = 32

// DialFunc connects to one host of a fleet and returns a client for it and
// a function that closes the connection.
type DialFunc func(ctx context.Context, host string) (*Client, func(), error)

// Fleet runs the Client verbs on many hosts at once: at most Parallel hosts
// at a time, each over its own connection, opened for the call and closed
// after it. One host's failure never stops the others: every verb returns
// one Result per host, in the order the hosts were given.
type Fleet struct {
	hosts    []string
	dial     DialFunc
	parallel int
	limit    time.Duration
}

// NewFleet returns a fleet of hosts reached with dial, working on at most
// parallel hosts at once (DefaultParallel when parallel < 1). Duplicate
// hosts count once.
func NewFleet(hosts []string, dial DialFunc, parallel int) *Fleet {
	if parallel < 1 {
		parallel = DefaultParallel
	}
	seen := make(map[string]bool, len(hosts))
	var uniq []string
	for _, h := range hosts {
		if !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	return &Fleet{hosts: uniq, dial: dial, parallel: parallel}
}

// SetHostTimeout bounds each host's part of every later call, connecting
// included, to d from the moment the host's turn comes (0: no bound, the
// default). A host that has not answered by then gets an error wrapping
// ErrNoAnswer; the others go on. A caller that waits (Wait, Logs with
// Follow) leaves it at 0: the wait's own timeout bounds those.
func (f *Fleet) SetHostTimeout(d time.Duration) { f.limit = d }

// Hosts returns the fleet's hosts, in order.
func (f *Fleet) Hosts() []string { return append([]string(nil), f.hosts...) }

// Result is one host's answer to a Fleet call: Value holds what the host
// returned (possibly partial, as the Client verb would return it) and Err
// its error, an *Error naming the host.
type Result[T any] struct {
	Host  string
	Value T
	Err   error
}

// Each connects to every host, at most Parallel at a time, and calls fn
// with the host (as given to NewFleet) and its client; the connection is closed when fn returns. It
// returns what fn returned for each host, in host order, the errors wrapped
// in an *Error naming the host; a host that could not be reached has only Err set.
func Each[T any](ctx context.Context, f *Fleet, fn func(ctx context.Context, host string, c *Client) (T, error)) []Result[T] {
	res := make([]Result[T], len(f.hosts))
	sem := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for i, h := range f.hosts {
		res[i].Host = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				res[i].Err = hostError(h, ctx.Err())
				return
			}
			defer func() { <-sem }()
			ctx, end := Within(ctx, f.limit)
			v, err := each(ctx, f.dial, h, fn)
			res[i].Value = v
			if err = end(err); err != nil {
				res[i].Err = hostError(h, err)
			}
		}()
	}
	wg.Wait()
	return res
}

// failed returns err as every host's result, for a call that reaches no
// host.
func failed[T any](f *Fleet, err error) []Result[T] {
	res := make([]Result[T], len(f.hosts))
	for i, h := range f.hosts {
		res[i] = Result[T]{Host: h, Err: hostError(h, err)}
	}
	return res
}

// each is one host's part of Each: connect, call fn, close.
func each[T any](ctx context.Context, dial DialFunc, host string, fn func(ctx context.Context, host string, c *Client) (T, error)) (T, error) {
	c, release, err := dial(ctx, host)
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	return fn(ctx, host, c)
}

// Run starts the job on every host with one id, s.ID, or a new one made
// once for all hosts when s.ID is "". A spec that Validate refuses reaches
// no host: each gets its error.
func (f *Fleet) Run(ctx context.Context, s Spec) []Result[jobdir.Job] {
	if err := s.Validate(); err != nil {
		return failed[jobdir.Job](f, err)
	}
	if s.ID == "" {
		s.ID = jobdir.NewID(time.Now())
	}
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) (jobdir.Job, error) {
		return c.Run(ctx, s)
	})
}

// Status reports on the jobs named by refs on every host.
func (f *Fleet) Status(ctx context.Context, refs ...string) []Result[[]jobdir.Job] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.Status(ctx, refs...)
	})
}

// List returns one page of jobs from every host; each host's page has its
// own cursor.
func (f *Fleet) List(ctx context.Context, o ListOptions) []Result[Page] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) (Page, error) {
		return c.List(ctx, o)
	})
}

// Wait waits for the jobs on every host. o.Timeout bounds the whole call,
// connecting included, from o.Since (zero: now), not each host: a host
// reached late, when fewer hosts than the fleet's parallelism are waited
// on at once, gets what is left of it, and one not reached by then an
// error wrapping ErrTimeout. Every host's timeout error names o.Timeout.
func (f *Fleet) Wait(ctx context.Context, refs []string, o WaitOptions) []Result[[]jobdir.Job] {
	if o.Timeout > 0 {
		if o.Since.IsZero() {
			o.Since = time.Now()
		}
		deadline := o.Since.Add(o.Timeout)
		g, dial := *f, f.dial
		g.dial = func(ctx context.Context, host string) (*Client, func(), error) {
			dctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			c, release, err := dial(dctx, host)
			if err != nil && !time.Now().Before(deadline) && ctx.Err() == nil {
				err = fmt.Errorf("no answer within %s: %w", o.Timeout, ErrTimeout)
			}
			return c, release, err
		}
		f = &g
	}
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.Wait(ctx, refs, o)
	})
}

// Stop stops the jobs on every host.
func (f *Fleet) Stop(ctx context.Context, refs []string, o StopOptions) []Result[[]jobdir.Job] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.Stop(ctx, refs, o)
	})
}

// Remove deletes the jobs on every host.
func (f *Fleet) Remove(ctx context.Context, refs []string, o RemoveOptions) []Result[[]string] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]string, error) {
		return c.Remove(ctx, refs, o)
	})
}

// Prune removes old ended jobs on every host.
func (f *Fleet) Prune(ctx context.Context, o PruneOptions) []Result[[]jobdir.Job] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.Prune(ctx, o)
	})
}

// Send writes data to the job's stdin on every host: each host gets all of
// data, so data is read into memory first.
func (f *Fleet) Send(ctx context.Context, ref string, data io.Reader, o SendOptions) []Result[jobdir.Job] {
	var b []byte
	if data != nil && !o.EOF {
		var err error
		if b, err = io.ReadAll(data); err != nil {
			return failed[jobdir.Job](f, fmt.Errorf("reading the data to send: %w", err))
		}
	}
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) (jobdir.Job, error) {
		return c.Send(ctx, ref, bytes.NewReader(b), o)
	})
}

// Logs reads the job's logs on every host. out gives the writers of each
// host's stdout.log and stderr.log; it is called once per host, from that
// host's goroutine, so writers shared between hosts must be safe for
// concurrent use.
func (f *Fleet) Logs(ctx context.Context, ref string, o LogOptions, out func(host string) (stdout, stderr io.Writer)) []Result[LogResult] {
	return Each(ctx, f, func(ctx context.Context, host string, c *Client) (LogResult, error) {
		stdout, stderr := out(host)
		return c.Logs(ctx, ref, o, stdout, stderr)
	})
}
