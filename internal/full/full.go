// Package full is what only the bgjob-full binary links of bgjob's
// command line (cli.Full): the transports to SSH hosts and containers
// (through package host), the MCP server and the terminal views of top
// and attach. The bgjob binary leaves them out, and runs bgjob-full for a
// request that needs one.
package full

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/host"
	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/internal/tui"
	"github.com/bgjob/bgjob/jobdir"
	ctr "github.com/bgjob/bgjob/runtime/container"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// New returns the command line's full part.
func New() *cli.Full {
	return &cli.Full{
		Dial: func(ctx context.Context, h string, o cli.HostOptions) (bgjob.Runtime, func(), error) {
			return host.Dial(ctx, h, options(o))
		},
		Endpoint:       endpoint,
		ConfigHosts:    sshrt.ConfigHosts,
		ErrorKind:      errorKind,
		TransportError: transportError,
		MCP:            serveMCP,
		Top: func(ctx context.Context, c *bgjob.Client, t cli.Terminal, o cli.TopOptions) error {
			return tui.Top(ctx, c, terminal(t), tui.TopOptions{All: o.All, NoColor: o.NoColor, Interval: o.Interval})
		},
		Attach: func(ctx context.Context, c *bgjob.Client, job jobdir.Job, t cli.Terminal, o cli.AttachOptions) (bool, jobdir.Job, error) {
			end, err := tui.Attach(ctx, c, job, terminal(t), tui.AttachOptions{DetachKey: o.DetachKey, Stdin: o.Stdin})
			return end.Ended, end.Job, err
		},
	}
}

// options are the host options of the command line's.
func options(o cli.HostOptions) host.Options {
	h := host.Options{Via: o.Via}
	h.SSH = sshrt.Options{ConfigFile: o.SSHConfig, Warn: o.Warn, CacheDir: o.CacheDir}
	if o.PromptIn != nil {
		ask := sshrt.TerminalPassphrase(o.PromptIn, o.PromptOut)
		if o.Share != nil {
			ask = o.Share(ask)
		}
		h.SSH.Passphrase = ask
	}
	return h
}

// endpoint returns where an SSH host leads; false for a container.
func endpoint(ctx context.Context, h string, o cli.HostOptions) (fmt.Stringer, bool, error) {
	if ctr.IsHost(h) {
		return nil, false, nil
	}
	e, err := sshrt.Resolve(ctx, h, options(o).SSH)
	if err != nil {
		return nil, false, err
	}
	return e, true, nil
}

// errorKind is the --json kind of an SSH host's or a container's error: a
// host key unknown or changed is "host_key"; a container that is absent
// or stopped, or a daemon that cannot be reached, is "unreachable".
func errorKind(err error) string {
	switch {
	case errors.Is(err, sshrt.ErrUnknownHost), errors.Is(err, sshrt.ErrHostKeyChanged):
		return "host_key"
	case errors.Is(err, ctr.ErrNoSuchContainer), errors.Is(err, ctr.ErrNotRunning), errors.Is(err, ctr.ErrDaemon):
		return "unreachable"
	}
	return ""
}

// transportError returns the SSH or container runtime's error err is or
// wraps, the host it names and what it says after the host.
func transportError(err error) (error, string, string, bool) {
	var (
		se *sshrt.Error
		sx *sshrt.ExitError
		ce *ctr.Error
		cx *ctr.ExitError
	)
	switch {
	case errors.As(err, &se):
		return se, se.Host, se.Err.Error(), true
	case errors.As(err, &sx):
		return sx, sx.Host, sx.Reason(), true
	case errors.As(err, &ce):
		return ce, ce.Host, ce.Err.Error(), true
	case errors.As(err, &cx):
		return cx, cx.Host, cx.Reason(), true
	}
	return nil, "", "", false
}

// serveMCP serves the MCP tools on o.In and o.Out.
func serveMCP(ctx context.Context, o cli.MCPOptions) error {
	srv, err := mcp.New(mcp.Options{
		Version: o.Version, Host: o.Host, Root: o.Root, Workspace: o.Workspace,
		AllowHosts: o.AllowHosts, MaxOutput: o.MaxOutput, KeepJobs: o.KeepJobs, Reader: o.Reader, HostTimeout: o.HostTimeout,
		Dial: o.Dial, Warn: o.Warn,
	})
	if err != nil {
		return err
	}
	return srv.Run(ctx, mcp.NewStdioTransport(o.In, o.Out))
}

// terminal is the command line's terminal, as package tui takes it.
func terminal(t cli.Terminal) tui.Terminal {
	return tui.Terminal{In: t.In, Out: t.Out, Stderr: t.Stderr, HostError: t.HostError}
}
