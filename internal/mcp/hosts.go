package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/bgjob/bgjob"
	hostpkg "github.com/bgjob/bgjob/host"
)

// hosts holds one client per host, connected on first use and kept for
// the server's lifetime; a connection that has ended is dialled again on
// the next call.
type hosts struct {
	opts Options

	mu    sync.Mutex
	conns map[string]*conn
}

type conn struct {
	// ready is closed once dialling has ended; then c or err is set.
	ready chan struct{}
	c     *bgjob.Client
	err   error
	close func()
	done  <-chan struct{} // closed when the connection has ended (nil: never)
}

func newHosts(o Options) (*hosts, error) {
	for _, p := range o.AllowHosts {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%w: --allow-host %q: %w", bgjob.ErrUsage, p, err)
		}
	}
	// The root and workspace are checked once, at the start.
	_, release, err := hostpkg.Client(context.Background(), "", o.Root, o.Workspace, hostpkg.Options{})
	if err != nil {
		return nil, err
	}
	release()
	return &hosts{opts: o, conns: map[string]*conn{}}, nil
}

// resolve turns a tool's host argument into the host to use ("" for this
// machine) and refuses hosts that --allow-host does not allow.
func (h *hosts) resolve(host string) (string, error) {
	if host == "" || host == h.opts.Host {
		return h.opts.Host, nil
	}
	if h.opts.Dial == nil {
		return "", fmt.Errorf("host %q: this server runs jobs on %s only", host, hostName(h.opts.Host))
	}
	if len(h.opts.AllowHosts) == 0 {
		return host, nil
	}
	for _, p := range h.opts.AllowHosts {
		if ok, _ := path.Match(p, host); ok {
			return host, nil
		}
	}
	return "", fmt.Errorf("host %q is not allowed: the server allows %q (--allow-host); omit host for %s", host, h.opts.AllowHosts, hostName(h.opts.Host))
}

// client returns the client for host ("" for this machine), dialling it
// when it has no live connection. Concurrent calls share one dial.
func (h *hosts) client(ctx context.Context, host string) (*bgjob.Client, error) {
	for {
		h.mu.Lock()
		cn := h.conns[host]
		if cn != nil && cn.dead() {
			delete(h.conns, host)
			if cn.close != nil {
				cn.close()
			}
			cn = nil
		}
		if cn == nil {
			cn = &conn{ready: make(chan struct{})}
			h.conns[host] = cn
			h.mu.Unlock()
			h.dial(ctx, host, cn)
		} else {
			h.mu.Unlock()
		}
		select {
		case <-cn.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if cn.err == nil {
			return cn.c, nil
		}
		h.mu.Lock()
		if h.conns[host] == cn {
			// A failed dial is not kept: the next call tries again.
			delete(h.conns, host)
		}
		h.mu.Unlock()
		if ctx.Err() == nil && errors.Is(cn.err, context.Canceled) {
			// Another call's dial was cancelled: dial again for this one.
			continue
		}
		return nil, cn.err
	}
}

func (h *hosts) dial(ctx context.Context, host string, cn *conn) {
	defer close(cn.ready)
	var (
		rt  bgjob.Runtime
		err error
	)
	if host == "" {
		// This machine, through the one way from a host string to a
		// runtime; other hosts through the dial the server was given.
		rt, cn.close, err = hostpkg.Dial(ctx, "", hostpkg.Options{})
	} else {
		rt, cn.close, err = h.opts.Dial(ctx, host)
	}
	if err != nil {
		cn.err, cn.close = err, nil
		return
	}
	if d, ok := rt.(bgjob.Connection); ok {
		cn.done = d.Done()
	}
	c, err := bgjob.NewClient(rt, h.opts.Root, h.opts.Workspace)
	if err != nil {
		if cn.close != nil {
			cn.close()
		}
		cn.err = err
		return
	}
	cn.c = c
}

// dead reports whether the connection was made and has ended since.
func (cn *conn) dead() bool {
	select {
	case <-cn.ready:
	default:
		return false
	}
	if cn.err != nil || cn.done == nil {
		return false
	}
	select {
	case <-cn.done:
		return true
	default:
		return false
	}
}

// closeAll closes every connection.
func (h *hosts) closeAll() {
	h.mu.Lock()
	conns := h.conns
	h.conns = map[string]*conn{}
	h.mu.Unlock()
	for _, cn := range conns {
		<-cn.ready
		if cn.close != nil {
			cn.close()
		}
	}
}

// forget drops host's connection if it still is the one of c, after a call
// on it failed in transit: the next call dials again.
func (h *hosts) forget(host string, c *bgjob.Client) {
	h.mu.Lock()
	cn := h.conns[host]
	if cn == nil || cn.c != c {
		h.mu.Unlock()
		return
	}
	delete(h.conns, host)
	h.mu.Unlock()
	if cn.close != nil {
		cn.close()
	}
}

// inTransit reports whether err is a failure of the connection rather than
// an answer of the host: not an error of bgjob's kinds (bgjob.IsAnswer),
// not a script's exit status, not the caller's cancellation.
func inTransit(err error) bool {
	if err == nil || bgjob.IsAnswer(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var exit interface{ ExitCode() int }
	return !errors.As(err, &exit)
}
