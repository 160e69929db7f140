// Package host turns a host as a user writes it into a bgjob runtime: ""
// is this machine, docker://[USER@]CONTAINER and podman://[USER@]CONTAINER
// a running container reached through its daemon, and anything else an SSH
// host ([user@]host[:port], ssh://…, or an alias of the ssh_config read);
// with Options.Via, every host but this machine is reached by running a
// command (runtime/via). It is the one way from a string to a host: bgjob's command line, its MCP
// server and a library user all reach hosts through Dial. A new transport
// is one more case here.
//
// It also holds the time those front ends give a host to answer
// (DefaultTimeout).
package host

import (
	"context"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/host/near"
	ctr "github.com/bgjob/bgjob/runtime/container"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// DefaultTimeout is how long bgjob's command line (--host-timeout) and MCP
// server (mcp.Options.HostTimeout) give a host to answer:
// bgjob.DefaultHostTimeout.
const DefaultTimeout = bgjob.DefaultHostTimeout

// Options configure the transports Dial may use. The zero value dials with
// each transport's defaults.
type Options struct {
	// SSH are the options of an SSH host's connection: the ssh_config
	// file, the cache of its answers, a passphrase prompt, warnings.
	SSH sshrt.Options
	// Container are the options of a container host: how the daemon's
	// environment is read.
	Container ctr.Options
	// Via, when not empty, is the command that reaches every host but
	// this machine, %h standing for the host's name (via.New): "kubectl
	// exec -i %h --", "podman exec -i %h", "ssh -F cfg %h". The host's
	// name is then only a name, whatever its form.
	Via string
}

// IsLocal reports whether host names this machine.
func IsLocal(host string) bool { return near.IsLocal(host) }

// Dial returns a runtime of host and what releases it (closes its
// connection); call release once done with the runtime. Errors are the
// transport's: an *ssh.Error, a *container.Error or a *via.Error, which
// name the host.
func Dial(ctx context.Context, host string, o Options) (rt bgjob.Runtime, release func(), err error) {
	if rt, release, ok, err := near.Dial(host, o.Via); ok {
		return rt, release, err
	}
	if ctr.IsHost(host) {
		r, err := ctr.Dial(ctx, host, o.Container)
		if err != nil {
			return nil, nil, err
		}
		return r, func() { r.Close() }, nil
	}
	r, err := sshrt.Dial(ctx, host, o.SSH)
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// Client returns a client of host for jobs under root ("" for the host's
// default) in workspace ("" for the default), configured by opts, and what
// releases it.
func Client(ctx context.Context, host, root, workspace string, o Options, opts ...bgjob.ClientOption) (*bgjob.Client, func(), error) {
	rt, release, err := Dial(ctx, host, o)
	if err != nil {
		return nil, nil, err
	}
	c, err := bgjob.NewClient(rt, root, workspace, opts...)
	if err != nil {
		release()
		return nil, nil, err
	}
	return c, release, nil
}
