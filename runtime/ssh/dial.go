package ssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// maxJumpDepth bounds ProxyJump recursion through the jump hosts' own config.
const maxJumpDepth = 8

// dialer opens the connection of one Runtime: the target, through its jump
// hosts, or over a ControlMaster socket.
type dialer struct {
	opts     Options
	resolver *resolver

	mu      sync.Mutex
	clients []*gossh.Client // every client opened, jump hosts first
	control bool            // the target client runs over a ControlMaster socket
	lost    error           // set when a keepalive gave up on a connection
}

// connect returns a client for cfg, using a ControlMaster socket when one is
// live, else a TCP connection made directly or through cfg's jump hosts.
func (d *dialer) connect(ctx context.Context, cfg *hostConfig, depth int) (*gossh.Client, error) {
	if cfg.controlPath != "" {
		if c, err := d.controlClient(ctx, cfg.controlPath); err == nil {
			if depth == 0 {
				d.control = true
			}
			return c, nil
		}
	}
	if cfg.proxyCommand != "" {
		return nil, fmt.Errorf("ProxyCommand is not supported (%q); use ProxyJump", cfg.proxyCommand)
	}
	var via *gossh.Client
	if cfg.proxyJump != "" {
		if depth >= maxJumpDepth {
			return nil, fmt.Errorf("ProxyJump chain deeper than %d hosts (a loop?)", maxJumpDepth)
		}
		for i, hop := range strings.Split(cfg.proxyJump, ",") {
			hop = strings.TrimSpace(hop)
			hcfg, err := d.resolver.resolve(ctx, hop, false)
			if err != nil {
				return nil, fmt.Errorf("jump host %s: %w", hop, err)
			}
			var c *gossh.Client
			if i == 0 {
				// The first hop is reached as "ssh hop" would be, through
				// its own ProxyJump if it has one.
				c, err = d.connect(ctx, hcfg, depth+1)
			} else {
				c, err = d.handshake(ctx, via, hcfg)
			}
			if err != nil {
				return nil, fmt.Errorf("jump host %s: %w", hop, err)
			}
			via = c
		}
	}
	return d.handshake(ctx, via, cfg)
}

// controlClient connects over an OpenSSH ControlMaster socket.
func (d *dialer) controlClient(ctx context.Context, path string) (*gossh.Client, error) {
	var nd net.Dialer
	dctx, cancel := context.WithTimeout(ctx, controlDialBound)
	defer cancel()
	nc, err := nd.DialContext(dctx, "unix", path)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(dctx, func() { nc.Close() })
	c, chans, reqs, err := gossh.NewControlClientConn(nc)
	if !stop() {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("control socket %s: %w", path, dctx.Err())
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	client := gossh.NewClient(c, chans, reqs)
	d.add(client)
	return client, nil
}

// handshake connects to cfg's address, directly or through via, and runs
// the SSH handshake and authentication within ConnectTimeout.
func (d *dialer) handshake(ctx context.Context, via *gossh.Client, cfg *hostConfig) (*gossh.Client, error) {
	addr := cfg.addr()
	hk, err := newHostKeyChecker(cfg, d.opts.ConfigFile, d.opts.warn())
	if err != nil {
		return nil, err
	}
	a := &auth{cfg: cfg, passphrase: d.opts.Passphrase}
	defer a.close()

	timeout := cfg.connectTimeout
	dctx, cancel := context.WithTimeout(ctx, timeout)
	var nc net.Conn
	if via == nil {
		var nd net.Dialer
		nc, err = nd.DialContext(dctx, "tcp", addr)
	} else {
		nc, err = via.DialContext(dctx, "tcp", addr)
	}
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("connecting to %s: timed out after %v (ConnectTimeout)", addr, timeout)
		}
		return nil, err
	}
	// The deadline covers the handshake and authentication too (closing the
	// conn ends them), except while a person types a passphrase and the key
	// is decrypted: local work, not the network's.
	timer := time.AfterFunc(timeout, func() { nc.Close() })
	stopCtx := context.AfterFunc(ctx, func() { nc.Close() })
	a.unlock = func(f func()) {
		if !timer.Stop() {
			f() // the deadline passed already; the handshake fails anyway
			return
		}
		defer timer.Reset(timeout)
		f()
	}
	config := &gossh.ClientConfig{
		User:              cfg.user,
		Auth:              []gossh.AuthMethod{a.method()},
		HostKeyCallback:   hk.check,
		HostKeyAlgorithms: hk.algorithms(),
		Timeout:           timeout,
	}
	c, chans, reqs, err := gossh.NewClientConn(nc, addr, config)
	fired := !timer.Stop()
	if !stopCtx() || fired {
		if c != nil {
			c.Close()
		}
		nc.Close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("connecting to %s: no SSH handshake within %v (ConnectTimeout)", addr, timeout)
	}
	if err != nil {
		nc.Close()
		switch {
		case hk.err != nil:
			return nil, hk.err
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, a.explain(err)
		}
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	client := gossh.NewClient(c, chans, reqs)
	d.add(client)
	go d.keepalive(client, cfg.aliveInterval, cfg.aliveCountMax)
	return client, nil
}

func (d *dialer) add(c *gossh.Client) {
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
}

// closeAll closes every client, the target first, then its jump hosts.
func (d *dialer) closeAll() error {
	d.mu.Lock()
	clients := d.clients
	d.clients = nil
	d.mu.Unlock()
	var first error
	for i := len(clients) - 1; i >= 0; i-- {
		if err := clients[i].Close(); err != nil && first == nil && !errors.Is(err, net.ErrClosed) {
			first = err
		}
	}
	return first
}

func (d *dialer) lostErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lost
}

// keepalive sends keepalive@openssh.com every interval and closes the
// connection once countMax intervals in a row passed without an answer, so
// that a dead link fails the sessions on it instead of hanging them.
// OpenSSH answers with a failure, which proves liveness all the same.
func (d *dialer) keepalive(c *gossh.Client, interval time.Duration, countMax int) {
	done := make(chan struct{})
	go func() {
		c.Wait()
		close(done)
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	replies := make(chan error, 1)
	pending, missed := false, 0
	for {
		select {
		case <-done:
			return
		case err := <-replies:
			pending = false
			if err != nil {
				return // the connection is closing
			}
			missed = 0
		case <-t.C:
			if pending {
				missed++
				if missed >= countMax {
					d.mu.Lock()
					if d.lost == nil {
						d.lost = fmt.Errorf("connection to %s lost: no answer to %d keepalives sent %v apart (ServerAliveInterval, ServerAliveCountMax)",
							c.RemoteAddr(), countMax, interval)
					}
					d.mu.Unlock()
					c.Close()
					return
				}
				continue
			}
			pending = true
			go func() {
				_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
				replies <- err
			}()
		}
	}
}
