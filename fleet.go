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

// DefaultHostTimeout is how long bgjob's command line (--host-timeout)
// and MCP server give a host to answer a call that does not wait (run
// without --wait, status, ls, logs without -f, rm, prune and send; stop
// gets its grace on top), connecting included, and to give the first
// answer of one that waits (wait, logs -f). Thirty seconds outlasts a
// slow login (a ConnectTimeout of 10 s, a jump host, startup files) and
// still ends a call to a host that will never answer while a person
// waits.
const DefaultHostTimeout = 30 * time.Second

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

// FleetOption configures a Fleet as NewFleet makes it.
type FleetOption func(*Fleet)

// WithHostTimeout bounds each host's part of every call, connecting
// included, to d from the moment the host's turn comes (0: no bound, the
// default). A host that has not answered by then gets an error wrapping
// ErrNoAnswer; the others go on. Of a call that waits (Wait, Logs with
// Follow) d bounds the host's first answer, as WithinAnswer: the wait's
// own timeout bounds the rest, and the whole when it is not longer than d.
func WithHostTimeout(d time.Duration) FleetOption {
	return func(f *Fleet) { f.limit = d }
}

// NewFleet returns a fleet of hosts reached with dial, working on at most
// parallel hosts at once (DefaultParallel when parallel < 1), configured
// by opts. Duplicate hosts count once.
func NewFleet(hosts []string, dial DialFunc, parallel int, opts ...FleetOption) *Fleet {
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
	f := &Fleet{hosts: uniq, dial: dial, parallel: parallel}
	for _, o := range opts {
		o(f)
	}
	return f
}

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
	return eachHost(ctx, f, Within, fn)
}

// eachWaiting is Each for a call that waits: the fleet's host timeout
// bounds each host's first answer (WithinAnswer).
func eachWaiting[T any](ctx context.Context, f *Fleet, fn func(ctx context.Context, host string, c *Client) (T, error)) []Result[T] {
	return eachHost(ctx, f, WithinAnswer, fn)
}

// eachHost is Each with each host's part bounded by within.
func eachHost[T any](ctx context.Context, f *Fleet, within func(context.Context, string, time.Duration) (context.Context, func(error) error), fn func(ctx context.Context, host string, c *Client) (T, error)) []Result[T] {
	res := make([]Result[T], len(f.hosts))
	one := func(i int, h string) {
		ctx, end := within(ctx, h, f.limit)
		v, err := each(ctx, f.dial, h, fn)
		res[i].Value = v
		if err = end(err); err != nil {
			res[i].Err = hostError(h, err)
		}
	}
	if len(f.hosts) == 1 {
		// One host, in this goroutine: a short call starts no other.
		res[0].Host = f.hosts[0]
		if err := ctx.Err(); err != nil {
			res[0].Err = hostError(f.hosts[0], err)
			return res
		}
		one(0, f.hosts[0])
		return res
	}
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
			one(i, h)
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
	return f.StatusWith(ctx, StatusOptions{}, refs...)
}

// StatusWith is Status reporting what o asks besides (Client.StatusWith).
func (f *Fleet) StatusWith(ctx context.Context, o StatusOptions, refs ...string) []Result[[]jobdir.Job] {
	return Each(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.StatusWith(ctx, o, refs...)
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
// The fleet's host timeout, when shorter than o.Timeout (or o.Timeout is
// 0), bounds each host's first answer (see WithHostTimeout).
func (f *Fleet) Wait(ctx context.Context, refs []string, o WaitOptions) []Result[[]jobdir.Job] {
	f, o.Since = f.waiting(o.Timeout, o.Since)
	return eachWaiting(ctx, f, func(ctx context.Context, _ string, c *Client) ([]jobdir.Job, error) {
		return c.Wait(ctx, refs, o)
	})
}

// Found is what WaitFor found on one host: the job, and the line that
// matched.
type Found struct {
	Job   jobdir.Job
	Match Match
}

// WaitFor waits on every host until a line of the job's output matches
// pattern (Client.WaitFor); o.Timeout bounds the whole call as Wait's
// does. Value holds the job also when Err says it ended without a match.
func (f *Fleet) WaitFor(ctx context.Context, ref, pattern string, o WaitForOptions) []Result[Found] {
	f, o.Since = f.waiting(o.Timeout, o.Since)
	return eachWaiting(ctx, f, func(ctx context.Context, _ string, c *Client) (Found, error) {
		j, m, err := c.WaitFor(ctx, ref, pattern, o)
		return Found{j, m}, err
	})
}

// FoundPort is what WaitPort found on one host: the job, and the port.
type FoundPort struct {
	Job  jobdir.Job
	Port jobdir.Port
}

// WaitPort waits on every host until the job listens on TCP port
// (Client.WaitPort); o.Timeout bounds the whole call as Wait's does.
// Value holds the job also when Err says it ended first.
func (f *Fleet) WaitPort(ctx context.Context, ref string, port int, o WaitPortOptions) []Result[FoundPort] {
	f, o.Since = f.waiting(o.Timeout, o.Since)
	return eachWaiting(ctx, f, func(ctx context.Context, _ string, c *Client) (FoundPort, error) {
		j, p, err := c.WaitPort(ctx, ref, port, o)
		return FoundPort{j, p}, err
	})
}

// waiting returns the fleet for a wait of timeout (0: none) begun at since
// (zero: now), and when it began: connecting to a host counts against the
// timeout, and a host not reached by then gets an error wrapping
// ErrTimeout; the host timeout bounds a host's first answer only when it
// is shorter than the timeout, which otherwise decides.
func (f *Fleet) waiting(timeout time.Duration, since time.Time) (*Fleet, time.Time) {
	if timeout <= 0 {
		return f, since
	}
	if since.IsZero() {
		since = time.Now()
	}
	g, dial := *f, f.dial
	if g.limit >= timeout {
		g.limit = 0
	}
	deadline := since.Add(timeout)
	g.dial = func(ctx context.Context, host string) (*Client, func(), error) {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		c, release, err := dial(dctx, host)
		if err != nil && !time.Now().Before(deadline) && ctx.Err() == nil {
			err = waitExpired(timeout)
		}
		return c, release, err
	}
	return &g, since
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
// concurrent use. With Follow the fleet's host timeout bounds each host's
// first answer (see WithHostTimeout).
func (f *Fleet) Logs(ctx context.Context, ref string, o LogOptions, out func(host string) (stdout, stderr io.Writer)) []Result[LogResult] {
	each := Each[LogResult]
	if o.Follow {
		each = eachWaiting[LogResult]
	}
	return each(ctx, f, func(ctx context.Context, host string, c *Client) (LogResult, error) {
		stdout, stderr := out(host)
		return c.Logs(ctx, ref, o, stdout, stderr)
	})
}
