package ssh

import (
	"context"
	"net"
	"strings"
)

// Endpoint is where a host name leads once the ssh configuration is
// applied: two names with equal Endpoints reach the same account on the
// same machine the same way.
type Endpoint struct {
	User     string
	HostName string // lowercased
	Port     string
	// ProxyJump and ProxyCommand are as configured ("" when unset), the
	// %-tokens of ProxyCommand expanded.
	ProxyJump    string
	ProxyCommand string
}

// String returns "user@hostname:port", followed by the ProxyJump or
// ProxyCommand that leads there.
func (e Endpoint) String() string {
	s := e.User + "@" + net.JoinHostPort(e.HostName, e.Port)
	if e.ProxyJump != "" {
		s += " via " + e.ProxyJump
	}
	if e.ProxyCommand != "" {
		s += " via ProxyCommand " + e.ProxyCommand
	}
	return s
}

// Resolve returns where host, given as to Dial, leads under opts, without
// connecting. Errors are Dial's errors for the same host and config.
func Resolve(ctx context.Context, host string, opts Options) (Endpoint, error) {
	cfg, err := newResolver(opts).resolve(ctx, host, true)
	if err != nil {
		return Endpoint{}, &Error{Host: host, Err: err}
	}
	return cfg.endpoint(), nil
}

func (c *hostConfig) endpoint() Endpoint {
	e := Endpoint{User: c.user, HostName: strings.ToLower(c.hostname), Port: c.port, ProxyJump: c.proxyJump}
	if c.proxyCommand != "" {
		e.ProxyCommand = newTokens(c.alias, c.hostname, c.port, c.user).expandOnly(c.proxyCommand, "hnpr%")
	}
	return e
}
