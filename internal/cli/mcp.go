package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/host"
	"github.com/bgjob/bgjob/internal/mcp"
)

type mcpOptions struct {
	allowHosts []string
	maxOutput  int
	keepJobs   bool
	reader     string
}

func (a *app) mcpCommand() *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve bgjob's verbs to an agent as MCP tools over stdio",
		Long: `Serve the Model Context Protocol on stdin and stdout, so that an agent (Claude
Code, Codex, Cursor, goose, a custom harness) gets durable background jobs on
this machine or on SSH hosts. Register it with the one-line config
{"command":"bgjob","args":["mcp"]}.

Tools: job_start, job_output, job_wait, job_list, job_stop and job_send, each
the library call of the matching verb. job_output reads with a cursor of its
own (logs --new with a reader per server process), so repeated calls never
return the same bytes twice; a client that starts a server for each call (the
MCP Inspector CLI) gives a fixed --reader, and reads each byte once: a read
counts once the client calls again or closes stdin after its result. Every tool takes an optional host: -H is the
default, else this machine; --allow-host restricts the others. One SSH
connection per host is kept for the server's lifetime, and dialled again
after a drop. Each call to a host is bounded, connecting included, by
--host-timeout beyond what it waits for (a wait's timeout_sec, a stop's
grace), and a wait's first answer by --host-timeout when that is shorter:
a host that does not answer (a login shell that blocks) gets an error
that names it.

stdout carries only the protocol; diagnostics go to stderr. A line that is
not a JSON-RPC message (or is over 8 MiB) gets a JSON-RPC error, and the
server reads on. When the client goes away (stdin closes, or stdout: a
write fails) or on INT, TERM or HUP, the server stops the jobs it started
(at the end of stdin, once it has answered every request it read),
unless --keep-jobs or the job was started with keep (they end killed, with
reason session_end); a client that stopped
reading holds it up for two seconds at most.

Each job it starts records the server as its owner in meta.json (ls shows
it: mcp:PID). A server killed with SIGKILL cannot stop its jobs: at
startup, while it serves, the server stops the jobs of its workspace on its
default host whose owning server is provably gone (it ran on this machine
and its process no longer exists, or the machine rebooted), and says so on
stderr; bgjob prune does the same. A job whose owner is alive, runs on
another machine, or that was started outside MCP is never touched.`,
		Example: `  claude mcp add bgjob -- bgjob mcp
  bgjob mcp -H build-host --allow-host 'build-*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.mcp(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "let clients name only hosts matching this pattern (shell glob; repeat it; default: any host)")
	f.IntVar(&o.maxOutput, "max-output", mcp.DefaultMaxOutput, "cap the output text of each tool result at N bytes")
	f.BoolVar(&o.keepJobs, "keep-jobs", false, "leave the jobs this server started running when it ends")
	f.StringVar(&o.reader, "reader", "", "name of job_output's read cursor (default: one per server process)")
	return cmd
}

func (a *app) mcp(ctx context.Context, o mcpOptions) error {
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
	srv, err := mcp.New(mcp.Options{
		Version: moduleVersion(), Host: a.host, Root: a.root, Workspace: a.workspace,
		AllowHosts: o.allowHosts, MaxOutput: o.maxOutput, KeepJobs: o.keepJobs, Reader: o.reader, HostTimeout: hostTimeout,
		Dial: a.mcpDial,
		Warn: func(msg string) { fmt.Fprintf(a.stderr, "bgjob: %s\n", msg) },
	})
	if err != nil {
		return err
	}
	// stdin and stdout belong to the protocol: never a passphrase prompt.
	err = srv.Run(ctx, mcp.NewStdioTransport(a.stdin, a.stdout))
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
	return host.Dial(ctx, h, a.hostOptions(false))
}
