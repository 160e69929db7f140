// Package mcp serves bgjob's verbs as Model Context Protocol tools
// (job_start, job_output, job_wait, job_list, job_stop, job_send,
// job_remove), so that
// any agent that speaks MCP gets durable background jobs on this machine or
// on SSH hosts. Every tool is one or two calls of the bgjob library, the
// same calls the CLI makes.
package mcp

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	hostpkg "github.com/bgjob/bgjob/host"
	"github.com/bgjob/bgjob/jobdir"
)

// DefaultMaxOutput caps the text of every tool result: 32 KiB.
const DefaultMaxOutput = 32 << 10

// The server's time limits, defaults and periods. Besides these, each
// tool's call to a host has Options.HostTimeout (bgjob.DefaultHostTimeout) on
// top of what it waits for (Server.limit), and job_stop's grace is the
// library's (bgjob.DefaultGrace) unless grace_sec says otherwise. The
// tools' descriptions and docs/mcp.md give the defaults and maxima in
// seconds: a change here is a change there.
const (
	// startWait is job_start's wait_sec by default: a command that fails
	// at once (a typo, a missing file) returns its status and output in
	// the same call, and a dev server is not held long before the model
	// hears that it runs.
	startWait = 3 * time.Second
	// waitTimeout is job_wait's timeout_sec by default: within the 60 s
	// that clients such as Codex give a tool call unless told otherwise
	// (docs/mcp.md), so that a wait without timeout_sec is a result, not
	// a call the client cut off.
	waitTimeout = 30 * time.Second
	// maxWait is the most that wait_sec and timeout_sec take: a client
	// has to be told to allow a call this long (docs/mcp.md), and a
	// longer wait is several calls, each of which says how the jobs
	// stand.
	maxWait = 10 * time.Minute
	// maxGrace is the most that job_stop's grace_sec takes: the call
	// may wait that long, and an hour is beyond any clean shutdown, so a
	// larger value is a mistake.
	maxGrace = time.Hour
	// sendTimeout bounds how long job_send waits for a job to read what
	// was sent: a job that reads its input takes it long before, and one
	// that never does fails the call instead of holding it.
	sendTimeout = 30 * time.Second
	// watchSlack is how long past timeout_sec job_wait's until_output
	// waits for the jobs' watches: over SSH the watches past the
	// connection's sessions start late, and a second after the ones that
	// started at once time out on the host, the deadline ends them.
	watchSlack = time.Second
	// lookGrace bounds job_wait's look at the jobs whose watch the wait's
	// deadline cut before the host answered: one status script.
	lookGrace = 5 * time.Second
	// progressEvery is Options.ProgressEvery by default: how often
	// job_wait tells a client that asked for progress that it still
	// waits; a few notifications in a default wait of 30 s.
	progressEvery = 5 * time.Second
	// endGrace is how long Run waits, once the session is over, for the
	// SDK to finish writing before it stops its jobs all the same: a
	// client that stopped reading would hold it for ever.
	endGrace = 2 * time.Second
	// launchWait is how long Shutdown waits for the launches under way
	// before it stops their jobs as they stand: their calls are
	// cancelled, so they end at once, and this bounds one that does not
	// (a host that stopped answering).
	launchWait = 20 * time.Second
	// shutdownBound bounds what Run does once the session is over (the
	// cursors moved over the reads delivered, the jobs stopped on every
	// host), past the end of Run's ctx, so that a signal still stops the
	// jobs and a silent host does not keep the process.
	shutdownBound = time.Minute
)

// Instructions tell the model when to use the tools.
const Instructions = `bgjob runs shell commands as durable background jobs, on this machine or on SSH hosts (host).
Use it for long-lived commands: dev servers, watchers, builds, test suites.
job_start starts one (with ready_output, e.g. "Listening on", it returns once the job prints that line, or fails first);
job_wait blocks until a job ends or prints a line (until_output); without ids, until the first of yours ends: never poll in a loop;
job_output returns only output you have not read yet; job_list shows the jobs (mine: true for yours); job_stop stops a job;
job_remove removes ended jobs and their logs (all: true for every ended job of yours).
Every result also tells what changed since your previous call for the jobs you started (events: ended, ready).
Stop what you start: jobs this server started are stopped when the session ends, unless started with keep.`

// keepJobsInstructions replace the last line of Instructions when the
// server runs with KeepJobs: then nothing stops the jobs for the model.
const keepJobsInstructions = `Stop what you start: this server leaves every job it started running when the session ends (--keep-jobs).`

// Dialer connects to an SSH host and returns its runtime and a function
// that closes the connection.
type Dialer func(ctx context.Context, host string) (bgjob.Runtime, func(), error)

// Options configure a Server.
type Options struct {
	// Version is bgjob's version, reported to clients.
	Version string
	// Host is the default host of every tool ("" for this machine).
	Host string
	// Root and Workspace select the jobs, as bgjob's --root and -w.
	Root, Workspace string
	// AllowHosts, when not empty, holds the patterns (path.Match syntax,
	// e.g. "web*") of the hosts a client may name; the default host is
	// always allowed.
	AllowHosts []string
	// Dial connects to SSH hosts; nil allows this machine only.
	Dial Dialer
	// MaxOutput caps each result's text (DefaultMaxOutput when 0).
	MaxOutput int
	// HostTimeout bounds each tool's call to a host, connecting included,
	// beyond what the call waits for (a wait's timeout_sec, a stop's
	// grace), and a wait's first answer when shorter than its timeout_sec:
	// host.DefaultTimeout when 0, no bound when negative.
	HostTimeout time.Duration
	// KeepJobs leaves the jobs this server started running when it shuts
	// down.
	KeepJobs bool
	// Reader names the read cursor of job_output ("" for one of its own per
	// server process, "mcp-CLIENT-RANDOM").
	Reader string
	// ProgressEvery is how often job_wait sends a progress notification to
	// a client that asked for them (5s when 0).
	ProgressEvery time.Duration
	// Owner is recorded in meta.json as the owner of every job the server
	// starts (bgjob.SelfOwner when nil: this process).
	Owner *jobdir.Owner
	// Warn, unless nil, receives the server's diagnostics, such as the
	// jobs it stopped at startup because their owner is gone.
	Warn func(msg string)
}

// Server is bgjob's MCP server: one per client connection.
type Server struct {
	opts  Options
	hosts *hosts
	owned *owned
	// digest tells each tool result what changed for the client's jobs.
	digest digest
	reader string
	sdk    *sdk.Server
	// cursors holds the reads of job_output whose results may not have
	// been written out yet.
	cursors cursors

	// calls ends the tool calls in flight when Run's ctx ends (INT or
	// TERM): the SDK's shutdown waits for them, and a job_wait may block
	// for minutes.
	calls    context.Context
	endCalls context.CancelFunc

	mu sync.Mutex // guards reader
}

// New returns a server with every tool registered.
func New(o Options) (*Server, error) {
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.HostTimeout == 0 {
		o.HostTimeout = hostpkg.DefaultTimeout
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = progressEvery
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	if o.Reader != "" {
		// Checked now, not by the first read: job_start reads too, after
		// its job has started.
		if err := jobdir.ValidateName("reader", o.Reader); err != nil {
			return nil, fmt.Errorf("%w: %w", bgjob.ErrUsage, err)
		}
	}
	hs, err := newHosts(o)
	if err != nil {
		return nil, err
	}
	if o.Owner == nil {
		self := bgjob.SelfOwner(jobdir.OwnerMCP)
		o.Owner = &self
	}
	s := &Server{opts: o, hosts: hs, owned: &owned{}, reader: o.Reader}
	s.calls, s.endCalls = context.WithCancel(context.Background())
	instr := Instructions
	if o.KeepJobs {
		instr = instr[:strings.LastIndexByte(instr, '\n')+1] + keepJobsInstructions
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "bgjob", Version: o.Version}, &sdk.ServerOptions{Instructions: instr})
	s.sdk.AddReceivingMiddleware(s.guardInput, s.endWithServer, s.tell)
	s.addTools()
	return s, nil
}

// endWithServer ends each request's context when the server's calls end,
// as the SDK does itself when the client goes away.
func (s *Server) endWithServer(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.calls, cancel)()
		return next(ctx, method, req)
	}
}

// SDK returns the underlying MCP server, for connecting it to a transport
// other than stdio (tests use in-memory transports).
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one client over t until the client goes away (stdin closes,
// for stdio, and every request read before is answered: see
// NewStdioTransport) or ctx ends, then reaps: it stops the jobs it started
// (see Shutdown).
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	// The jobs of servers that died without reaping are stopped while
	// this one serves: the handshake does not wait for it.
	octx, cancelOrphans := context.WithCancel(ctx)
	orphansDone := make(chan struct{})
	go func() {
		defer close(orphansDone)
		s.StopOrphans(octx)
	}()
	defer context.AfterFunc(ctx, s.endCalls)()
	ran := make(chan error, 1)
	go func() { ran <- s.sdk.Run(ctx, t) }()
	var ended <-chan struct{}
	if st, ok := t.(*stdioTransport); ok {
		ended = st.inputEnded()
	}
	var err error
	finished := false
	select {
	case err = <-ran:
		finished = true
	case <-ctx.Done():
	case <-ended:
	}
	if ctx.Err() != nil || ended != nil && isClosed(ended) {
		// The session is over (a signal, the end of the input). The SDK
		// returns once its writes are done: a client that stopped reading
		// keeps one blocked for ever, so it gets a moment, and the jobs
		// are stopped whether it has returned or not.
		s.endCalls()
		if !finished {
			select {
			case err = <-ran:
				finished = true
			case <-time.After(endGrace):
			}
		}
		if ctx.Err() != nil {
			err = nil
		}
	}
	cancelOrphans()
	<-orphansDone
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownBound)
	defer cancel()
	// A client that closed its input after the results of its reads (a
	// one-shot client: a server a call) has had them: the cursors move
	// over them now, not at a next read that never comes to this server.
	if st, ok := t.(*stdioTransport); ok && finished && ctx.Err() == nil && st.readsDelivered() {
		s.commitHeld(rctx)
	}
	if rerr := s.Shutdown(rctx); err == nil {
		err = rerr
	}
	return err
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Shutdown stops the jobs this server started (unless KeepJobs, or the
// job was started with keep) and closes its SSH connections.
func (s *Server) Shutdown(ctx context.Context) error {
	defer s.hosts.closeAll()
	if s.opts.KeepJobs {
		return nil
	}
	var errs []string
	// The launches under way end at once, their calls cancelled; one that
	// has not within launchWait is stopped as it stands: a stop marks a
	// job directory without meta.json, so that its command never runs.
	wctx, cancel := context.WithTimeout(ctx, launchWait)
	jobs := s.owned.take(wctx)
	cancel()
	for host, ids := range jobs {
		// On a new connection if the one it had dropped: a stop is safe
		// to repeat.
		err := s.do(ctx, host, true, s.limit(bgjob.DefaultGrace), func(ctx context.Context, c *bgjob.Client, _ string) error {
			// A job removed since it started (rm, prune) is done with.
			_, err := c.Stop(ctx, ids, bgjob.StopOptions{Reason: bgjob.ReasonSessionEnd})
			return bgjob.IgnoreNotFound(err)
		})
		if err != nil {
			errs = append(errs, fmt.Sprintf("stopping the jobs this server started on %s: %v", hostName(host), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// commitHeld moves each cursor over the read it holds (cursors), its
// result known to have reached the client.
func (s *Server) commitHeld(ctx context.Context) {
	for _, h := range s.cursors.held() {
		err := s.do(ctx, h.host, true, s.limit(0), func(ctx context.Context, c *bgjob.Client, _ string) error {
			// Nothing is read (an empty range at the end, held): the read
			// only commits the one before it.
			_, err := c.Logs(ctx, h.id, bgjob.LogOptions{Cursor: h.cur, Tail: bgjob.Zero}, io.Discard, io.Discard)
			return bgjob.IgnoreNotFound(err)
		})
		if err != nil {
			s.warn("moving the read cursor %s of job %s on %s over what the client read: %v", h.cur.Reader, h.id, hostName(h.host), err)
		}
	}
}

// StopOrphans stops the jobs on the server's default host whose owner, a
// server that ended without stopping them (SIGKILL), is provably gone
// (bgjob.Client.StopOrphans), and reports each through Warn.
func (s *Server) StopOrphans(ctx context.Context) ([]jobdir.Job, error) {
	var jobs []jobdir.Job
	err := s.do(ctx, "", true, s.limit(bgjob.DefaultGrace), func(ctx context.Context, c *bgjob.Client, _ string) (err error) {
		jobs, err = c.StopOrphans(ctx, bgjob.OrphanOptions{})
		return err
	})
	for _, j := range jobs {
		if j.Owner != nil {
			s.warn("stopped job %s on %s: its owner, bgjob mcp pid %d, is gone", j.ID, hostName(s.opts.Host), j.Owner.PID)
		}
	}
	if err != nil && ctx.Err() == nil {
		s.warn("stopping the jobs of servers that are gone on %s: %v", hostName(s.opts.Host), err)
	}
	return jobs, err
}

func (s *Server) warn(format string, args ...any) {
	if s.opts.Warn != nil {
		s.opts.Warn(fmt.Sprintf(format, args...))
	}
}

// safeReader replaces each run of characters a reader's name may not hold
// (other than letters, digits and ._@:+-) with one "_". No regexp: one
// compiled at package init would cost every bgjob process.
func safeReader(s string) string {
	var b strings.Builder
	run := false
	for _, r := range s {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@:+-", r)) {
			b.WriteRune(r)
			run = false
			continue
		}
		if !run {
			b.WriteByte('_')
		}
		run = true
	}
	return b.String()
}

// readerFor returns the cursor name of job_output for the session's client.
func (s *Server) readerFor(req *sdk.CallToolRequest) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader == "" {
		client := "client"
		if req != nil && req.Session != nil {
			if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
				client = p.ClientInfo.Name
			}
		}
		client = strings.Trim(safeReader(client), "._@:+-")
		if len(client) > 40 {
			client = client[:40]
		}
		if client == "" {
			client = "client"
		}
		s.reader = "mcp-" + client + "-" + strings.ToLower(rand.Text()[:8])
	}
	return s.reader
}

func hostName(h string) string {
	if h == "" {
		return "this machine"
	}
	return h
}
