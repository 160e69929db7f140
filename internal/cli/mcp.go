package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
)

type mcpOptions struct {
	allowHosts []string
	maxOutput  int
	keepJobs   bool
	reader     string
}

func (a *app) mcpCommand() *cobra.Command {
	var o mcpOptions
	long, example := help("mcp")
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "Serve bgjob's verbs to an agent as MCP tools over stdio",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runMCP(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "let clients name only hosts matching this pattern (shell glob; repeat it; default: any host)")
	f.IntVar(&o.maxOutput, "max-output", DefaultMCPMaxOutput, "cap the output text of each tool result at N bytes")
	f.BoolVar(&o.keepJobs, "keep-jobs", false, "leave the jobs this server started running when it ends")
	f.StringVar(&o.reader, "reader", "", "name of job_output's read cursor (default: one per server process)")
	return cmd
}

// runMCP serves the MCP tools on stdin and stdout until the client goes.
func (a *app) runMCP(ctx context.Context, o mcpOptions) error {
	if a.many() {
		return usageError("bgjob mcp takes one -H, the default host; the tools name other hosts with host")
	}
	if o.maxOutput < 1024 {
		return usageError("--max-output must be at least 1024")
	}
	// A hang-up (the terminal of the client closed) ends the session as
	// INT and TERM do, so that the server stops its jobs.
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	// A client that closed our stdout makes a write fail (EPIPE), which
	// ends the session, and the server stops its jobs: SIGPIPE would kill
	// it before it stopped any.
	defer quietPipe()()
	// --host-timeout bounds each tool's call to a host, as each verb's.
	hostTimeout := a.hostTimeout
	if hostTimeout == 0 {
		hostTimeout = -1
	}
	// stdin and stdout belong to the protocol: never a passphrase prompt.
	err := full.MCP(ctx, MCPOptions{
		Version: moduleVersion(), Host: a.host, Root: a.root, Workspace: a.workspace,
		AllowHosts: o.allowHosts, MaxOutput: o.maxOutput, KeepJobs: o.keepJobs, Reader: o.reader, HostTimeout: hostTimeout,
		Dial: a.mcpDial,
		Warn: func(msg string) { fmt.Fprintf(a.stderr, "bgjob: %s\n", msg) },
		In:   a.stdin, Out: a.stdout,
	})
	if err != nil && parent.Err() != nil {
		// INT or TERM ended the session: bgjob then exits 130 and says
		// nothing more, but a failure to stop the session's jobs is no
		// consequence of the signal, and is said.
		fmt.Fprintf(a.stderr, "bgjob: error: %v\n", err)
	}
	return err
}

// mcpDial connects to a host for the server, without prompts: its stdin
// is the protocol's.
func (a *app) mcpDial(ctx context.Context, h string) (bgjob.Runtime, func(), error) {
	return a.dial(ctx, h, false)
}
