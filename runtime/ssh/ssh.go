// Package ssh runs bgjob's shell scripts on a remote host over SSH.
//
// A Runtime holds one SSH connection (golang.org/x/crypto/ssh) and runs each
// script on a new session as "sh -c 'SCRIPT'". Nothing is installed on the
// host and nothing is parsed from the session: scripts carry their own
// markers, and stdout is passed on byte for byte.
//
// Dial resolves the host the way OpenSSH does, by asking "ssh -G" when the
// ssh client is installed (so Match, Include and tokens behave exactly as
// with ssh; the answers can be cached, see Options.CacheDir) and by reading
// ssh_config itself when ssh is absent or fails. It honours HostName,
// User, Port, IdentityFile, IdentitiesOnly, IdentityAgent, CertificateFile,
// ProxyJump, StrictHostKeyChecking, UserKnownHostsFile, HashKnownHosts,
// HostKeyAlias, ConnectTimeout, ServerAliveInterval, ServerAliveCountMax and
// ControlPath (a live OpenSSH ControlMaster socket is used instead of a new
// connection). Host keys are checked strictly unless the config says
// otherwise.
package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/bgjob/bgjob/runtime/tail"
	"github.com/bgjob/bgjob/shellgen"
)

// maxSessions bounds the sessions open at once on one connection; OpenSSH's
// MaxSessions defaults to 10.
const maxSessions = 8

// The SSH runtime's time limits and periods. The first three are bgjob's
// defaults for ssh_config settings that OpenSSH leaves unset or at 0
// (ssh_config's own value wins), written as ssh_config writes them; the
// caller's ctx bounds every call besides.
const (
	// defaultConnectTimeout is ConnectTimeout, in seconds, where
	// ssh_config sets none (OpenSSH then waits for the system's TCP
	// timeout, minutes): it bounds connecting, the handshake and
	// authentication, as pdsh's, so that a host that is down fails while
	// a person waits and the other hosts of a fleet go on.
	defaultConnectTimeout = "10"
	// defaultAliveInterval is ServerAliveInterval, in seconds, where
	// ssh_config sets none (OpenSSH then sends no keepalive): a link that
	// died without a word fails its sessions after defaultAliveCountMax
	// intervals without an answer, 45 s, instead of hanging them.
	defaultAliveInterval = "15"
	// defaultAliveCountMax is ServerAliveCountMax where ssh_config leaves
	// it at 0: OpenSSH's own default, 3.
	defaultAliveCountMax = "3"
	// controlDialBound bounds connecting to an OpenSSH ControlMaster
	// socket and its greeting: a live master, on this machine, answers at
	// once; one that does not (gone, hung) is passed over, and bgjob
	// connects by itself.
	controlDialBound = 2 * time.Second
	// startWait is how long the host's shell may take to start a script
	// of bgjob's (one that prints shellgen.BeginMarker first) once its
	// session has started: the login shell runs its startup files first,
	// and one that reads its input (a .bashrc that asks a question, runs
	// cat) waits for ever on the stdin bgjob keeps open, or eats the
	// script that comes on it. Thirty seconds outlasts a slow startup.
	startWait = 30 * time.Second
	// sessionRetryFirst and sessionRetryMax are the first and the longest
	// pause between newSession's tries of a refused channel, doubled after
	// each: short at first, for a slot that frees at once, and at most a
	// second apart for one that takes seconds on a loaded host.
	sessionRetryFirst = 20 * time.Millisecond
	sessionRetryMax   = time.Second
	// sessionPatience bounds how long newSession retries a refused channel
	// when its ctx has no deadline of its own: well past the seconds a
	// loaded host takes to free a slot.
	sessionPatience = time.Minute
	// closeWait bounds how long a cancelled Exec waits for its session to
	// close: milliseconds normally, until the keepalive gives up on a dead
	// link, which a call's timeout must not wait for (see closed).
	closeWait = 250 * time.Millisecond
	// closeGrace bounds how long Close waits for the sessions still open
	// over a ControlMaster socket (a script that lingers after its
	// output), which would crash the master if closed under it.
	closeGrace = 2 * time.Second
	// cacheMaxAge is how long an entry of the ssh_config cache that
	// nobody rewrote stays on disk: a month of a host not used.
	cacheMaxAge = 30 * 24 * time.Hour
	// racyWindow: a file modified this close to (or after) the moment ssh
	// started reading may have changed under it, within the resolution
	// of a file's modification time; such answers are not cached.
	racyWindow = time.Second
)

var (
	// ErrUnknownHost is wrapped by Dial's error when known_hosts has no key
	// for the host and StrictHostKeyChecking does not allow adding one.
	ErrUnknownHost = errors.New("unknown host")
	// ErrHostKeyChanged is wrapped by Dial's error when the host presented a
	// key other than the one in known_hosts.
	ErrHostKeyChanged = errors.New("host key changed")
)

// Options configures Dial. The zero value reads the ssh configuration the
// ssh command would read.
type Options struct {
	// ConfigFile is the ssh_config to use, as with "ssh -F". Empty means
	// ssh's defaults: ~/.ssh/config and /etc/ssh/ssh_config. A file that
	// does not exist counts as an empty one.
	ConfigFile string
	// ConfigOptions override the config file for the target host, as with
	// "ssh -o": each is "Keyword=value", e.g. "UserKnownHostsFile=/tmp/kh".
	ConfigOptions []string
	// Warn receives warnings, one message at a time without a trailing
	// newline, such as a host key being added to known_hosts. Nil discards
	// them. The package writes nothing to os.Stdout or os.Stderr itself.
	Warn func(msg string)
	// Passphrase is asked for the passphrase of an encrypted identity file
	// whose key ssh-agent does not hold. Nil means never ask: such keys are
	// skipped, and an authentication failure names them. See
	// TerminalPassphrase.
	Passphrase func(keyFile string) ([]byte, error)
	// CacheDir, when set, keeps the answers of "ssh -G" in CacheDir/ssh-config
	// so that later Dials skip running it. An answer is used only while the
	// ssh binary, the config files it came from (Include included) and the
	// environment variables they reference are unchanged. Empty means no
	// cache; the CLI uses os.UserCacheDir()/bgjob.
	CacheDir string

	sshBinary string // tests: "-" forces the ssh_config fallback
}

// warn returns Warn, or a function that discards the message.
func (o Options) warn() func(string) {
	if o.Warn == nil {
		return func(string) {}
	}
	return o.Warn
}

// Runtime runs scripts on one host over one SSH connection. It is safe for
// concurrent use; at most 8 scripts run at once, the rest wait.
type Runtime struct {
	host   string
	client *gossh.Client
	dialer *dialer
	sem    chan struct{}
	done   chan struct{}
	// open counts the sessions whose channel is not closed yet.
	open sync.WaitGroup
	// startPatience bounds how long a script of bgjob's may take to print
	// its begin marker once its session has started (startWait).
	startPatience time.Duration
}

// Dial connects to host, given as "[user@]host[:port]" or as an alias from
// the ssh configuration. ctx bounds connecting only. Errors are an *Error
// naming the host, e.g. "web1: dial tcp 127.0.0.1:2222: connect:
// connection refused"; host key refusals wrap ErrUnknownHost or
// ErrHostKeyChanged.
func Dial(ctx context.Context, host string, opts Options) (*Runtime, error) {
	if err := checkConfigFile(opts.ConfigFile); err != nil {
		return nil, &Error{Host: host, Err: err}
	}
	r := newResolver(opts)
	cfg, err := r.resolve(ctx, host, true)
	if err != nil {
		return nil, &Error{Host: host, Err: err}
	}
	d := &dialer{opts: opts, resolver: r}
	client, err := d.connect(ctx, cfg, 0)
	if err != nil {
		d.closeAll()
		return nil, &Error{Host: host, Err: err}
	}
	rt := &Runtime{host: host, client: client, dialer: d, sem: make(chan struct{}, maxSessions), done: make(chan struct{}), startPatience: startWait}
	go func() {
		client.Wait()
		close(rt.done)
	}()
	return rt, nil
}

// Done returns a channel that is closed once the connection has ended:
// closed by Close, dropped by the server or the network, or given up on
// after unanswered keepalives. A caller that keeps a Runtime for many calls
// dials again then.
func (r *Runtime) Done() <-chan struct{} { return r.done }

// Host returns the host as given to Dial.
func (r *Runtime) Host() string { return r.host }

// Close closes the connection, ending the sessions still open. Jobs that
// scripts started detached keep running. Over a ControlMaster socket it
// first waits, for at most closeGrace, until every session's channel is
// closed: OpenSSH's master (9.2p1) dies of SIGSEGV when a message for a
// session arrives after the client that opened it has gone (an exit
// status that follows the script's last output), and with it every later
// "ssh -S" falls back to a connection of its own.
func (r *Runtime) Close() error {
	if r.dialer.control {
		idle := make(chan struct{})
		// Ends once the sessions do; closeAll ends those still open.
		go func() { r.open.Wait(); close(idle) }()
		select {
		case <-idle:
		case <-time.After(closeGrace):
		}
	}
	return r.dialer.closeAll()
}

// Error is an error of the host's connection or of running a script on
// it: Dial's and Exec's errors but ExitError. Its message is the host,
// then what went wrong: "web1: dial tcp 127.0.0.1:2222: connect:
// connection refused".
type Error struct {
	Host string
	Err  error
}

func (e *Error) Error() string { return e.Host + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitError is returned by Exec when the script exited with a non-zero
// status or was killed by a signal. Its message is the host, then
// Reason.
type ExitError struct {
	Host   string
	Status int    // exit status; -1 when killed by a signal
	Signal string // signal name without "SIG", when killed by one
	Stderr string // the last lines the script wrote to stderr
}

func (e *ExitError) Error() string { return e.Host + ": " + e.Reason() }

// Reason is what ExitError's message says after the host: "script exited
// with status 3", then the end of its stderr.
func (e *ExitError) Reason() string {
	var how string
	if e.Signal != "" {
		how = "killed by signal " + e.Signal
	} else {
		how = fmt.Sprintf("exited with status %d", e.Status)
	}
	msg := "script " + how
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// ExitCode returns the script's exit status, or -1 when a signal killed it.
func (e *ExitError) ExitCode() int { return e.Status }

// Exec runs script on the host as "sh -c script" (through the login shell,
// which may print banners to stderr; stdout carries only what the script
// and the shell's rc files write). It copies stdin to the script (which
// sees end of file once stdin is drained; immediately when stdin is nil) and
// the script's stdout to stdout as it arrives. It returns when the script
// has exited and its output is drained; Exec does not wait for stdin to be
// drained. A non-zero exit returns an *ExitError carrying the end of the
// script's stderr. Cancelling ctx closes the script's stdin and the session
// and returns ctx.Err(); scripts that must end then read stdin until EOF.
func (r *Runtime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	command, stdin, sent, err := remoteCommand(script, stdin)
	if err != nil {
		return &Error{Host: r.host, Err: fmt.Errorf("script: %w", err)}
	}
	if err := r.acquire(ctx); err != nil {
		return err
	}
	defer func() { <-r.sem }()
	x, err := r.start(ctx, command, script, stdout)
	if err != nil {
		return err
	}
	// Once ctx has ended, or the script has missed its start, the session
	// is closed from there (context.AfterFunc's function, watchStart), not
	// here.
	closeSess := true
	defer func() {
		if closeSess {
			x.sess.Close()
		}
	}()
	if x.out.begun != nil {
		finished := make(chan struct{})
		defer close(finished)
		go x.watchStart(r.startPatience, sent, finished)
	}
	go x.feed(stdin)
	waitErr, ended, ctxErr := x.wait(ctx)
	closeSess = ended
	if ctxErr != nil {
		return ctxErr
	}
	return x.result(waitErr)
}

// remoteCommand returns the command that runs script on the host, and the
// stdin to give it. The remote user's login shell runs "exec sh -c
// 'script'": sh then leads the process group sshd made for the session,
// which is how a script knows the group is its own to end (bg_watchin).
// A script too long for one argument on the host (the server runs the
// login shell with the quoted command as one) goes first on stdin
// instead, read by a bootstrap (shellgen.Bootstrap); sent is closed once
// the whole script has gone on stdin. sent is nil when the script goes as
// the argument: the host has it at once.
func remoteCommand(script string, stdin io.Reader) (command string, in io.Reader, sent chan struct{}, err error) {
	quoted, err := shellgen.Quote(script)
	if err != nil {
		return "", nil, nil, err
	}
	command = "exec sh -c " + quoted
	if len(command) <= shellgen.MaxArgScript {
		return command, stdin, nil, nil
	}
	boot, _ := shellgen.Quote(shellgen.Bootstrap())
	command = "exec sh -c " + boot + " sh " + strconv.Itoa(len(script))
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	sent = make(chan struct{})
	return command, io.MultiReader(&endSignal{r: strings.NewReader(script), end: sent}, stdin), sent, nil
}

// acquire takes one of the connection's session slots, waiting while all
// are taken; it returns ctx.Err() once ctx has ended. Exec gives the slot
// back when it returns.
func (r *Runtime) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// execution is one script that Exec runs, on a session of its own.
type execution struct {
	r      *Runtime
	sess   *gossh.Session
	out    *gatedWriter
	stderr *tail.Buffer
	pipe   *stdinPipe
	// unstarted is closed when the script has not begun in time; its
	// session is closed then (watchStart).
	unstarted chan struct{}
}

// start opens a session and starts command on it, the script's stdout
// going to stdout and the end of its stderr kept. The session counts as
// open until Wait has seen its channel closed (Close waits for that over
// a ControlMaster socket).
func (r *Runtime) start(ctx context.Context, command, script string, stdout io.Writer) (*execution, error) {
	sess, err := r.newSession(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, r.transportErr("opening session", err)
	}
	r.open.Add(1)
	out := &gatedWriter{w: stdout}
	if stdout == nil {
		out.w = io.Discard
	}
	if strings.Contains(script, shellgen.BeginMarker) {
		out.begun = make(chan struct{})
	}
	// When stdout fails, end the script rather than let it block on a
	// full channel window.
	out.fail = func() { sess.Close() }
	x := &execution{r: r, sess: sess, out: out, stderr: &tail.Buffer{Max: 4096}, unstarted: make(chan struct{})}
	sess.Stdout = out
	sess.Stderr = x.stderr
	in, err := sess.StdinPipe()
	if err != nil {
		return nil, r.abandon(sess, r.transportErr("opening session", err))
	}
	if err := sess.Start(command); err != nil {
		return nil, r.abandon(sess, r.transportErr("starting script", err))
	}
	x.pipe = &stdinPipe{w: in}
	return x, nil
}

// abandon closes a session whose script did not start, which no longer
// counts as open, and returns err.
func (r *Runtime) abandon(sess *gossh.Session, err error) error {
	sess.Close()
	r.open.Done()
	return err
}

// watchStart closes the session of a script that has not begun (printed
// the begin marker) within patience of the host having the whole script,
// and closes unstarted then: a script that has not begun in time never
// will. sent, unless nil, is closed once the host has the script. It
// returns early once finished is closed.
func (x *execution) watchStart(patience time.Duration, sent, finished <-chan struct{}) {
	if sent != nil {
		select {
		case <-sent:
		case <-x.out.begun:
			return
		case <-finished:
			return
		}
	}
	t := time.NewTimer(patience)
	defer t.Stop()
	select {
	case <-x.out.begun:
	case <-finished:
	case <-t.C:
		close(x.unstarted)
		x.sess.Close()
	}
}

// feed copies stdin (none when nil) to the script, then sends the end of
// its input.
func (x *execution) feed(stdin io.Reader) {
	if stdin != nil {
		io.Copy(x.pipe, stdin)
	}
	x.pipe.Close()
}

// wait waits for the script's session to end, for ctx to end (the
// session is closed then) or for the script to miss its start. It
// returns Wait's error and ended true when the session ended on its own:
// the caller closes it then. Otherwise the session was closed here and
// ctxErr, when not nil, is what Exec returns.
func (x *execution) wait(ctx context.Context) (waitErr error, ended bool, ctxErr error) {
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		close(cancelled)
		// On a stalled link these writes block until the connection
		// closes (the caller's Close, or the keepalive giving up): Exec
		// does not wait for them. The script sees its stdin end and ends
		// itself (bg_watchin); a write under way is ended by the closed
		// session.
		x.pipe.TryClose()
		x.sess.Close()
	})
	waited := make(chan error, 1)
	go func() {
		err := x.sess.Wait()
		x.r.open.Done()
		waited <- err
	}()
	select {
	case err := <-waited:
		if stop() {
			return err, true, nil
		}
		return nil, false, ctx.Err()
	case <-cancelled:
		x.r.closed(waited, x.out)
		return nil, false, ctx.Err()
	case <-x.unstarted:
		// A command that outlives its session (a ForceCommand that
		// sleeps: sshd keeps the channel until it exits) would hold
		// Wait for ever.
		x.r.closed(waited, x.out)
		if !stop() {
			return nil, false, ctx.Err()
		}
		return nil, false, nil
	}
}

// result is what Exec returns once the script's session has ended, err
// being Wait's error: a failed copy of stdout, a script that never began,
// the script's non-zero exit, or the connection's failure.
func (x *execution) result(err error) error {
	host := x.r.host
	if werr := x.out.failed(); werr != nil {
		return &Error{Host: host, Err: fmt.Errorf("copying stdout: %w", werr)}
	}
	select {
	case <-x.unstarted:
		return &Error{Host: host, Err: fmt.Errorf("the host's shell did not start bgjob's script within %s: a startup file of the login shell (a .bashrc, say) may be reading its input", x.r.startPatience)}
	default:
	}
	if err == nil {
		return nil
	}
	var exit *gossh.ExitError
	if errors.As(err, &exit) {
		e := &ExitError{Host: host, Status: exit.ExitStatus(), Signal: exit.Signal(), Stderr: x.stderr.LastLines(10)}
		if e.Signal != "" {
			e.Status = -1
		}
		return e
	}
	return x.r.transportErr("running script", err)
}

// closed waits for the end of a session Exec has closed, for at most
// closeWait: the closed session normally ends Wait at once
// (milliseconds); on a dead link it can take until the keepalive gives
// up, and a command that outlives its session holds it until it exits, so
// do not wait for that (a second was a call's timeout made a second
// longer). Nothing more is written to stdout once Exec returns.
func (r *Runtime) closed(waited <-chan error, out *gatedWriter) {
	select {
	case <-waited:
	case <-time.After(closeWait):
	}
	out.close()
}

// newSession opens a session, retrying while the server refuses the
// channel: OpenSSH answers "open failed" once MaxSessions are open, and a
// slot stays taken until the command it ran exits, even after the session
// closed. On a loaded host that takes seconds (twelve tries, 7 s in all,
// failed scripts that a slot would have run a moment later), so the tries
// go on until ctx ends, or for sessionPatience when it has no deadline.
func (r *Runtime) newSession(ctx context.Context) (*gossh.Session, error) {
	delay := sessionRetryFirst
	giveUp := time.Now().Add(sessionPatience)
	if d, ok := ctx.Deadline(); ok {
		giveUp = d
	}
	for {
		s, err := r.client.NewSession()
		if err == nil {
			return s, nil
		}
		var oce *gossh.OpenChannelError
		if !errors.As(err, &oce) || oce.Reason == gossh.UnknownChannelType || time.Now().After(giveUp) {
			return nil, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		delay = min(2*delay, sessionRetryMax)
	}
}

func (r *Runtime) transportErr(op string, err error) error {
	if lost := r.dialer.lostErr(); lost != nil {
		return &Error{Host: r.host, Err: fmt.Errorf("%s: %w", op, lost)}
	}
	var missing *gossh.ExitMissingError
	if errors.As(err, &missing) || errors.Is(err, io.EOF) {
		return &Error{Host: r.host, Err: fmt.Errorf("%s: connection closed before the script exited", op)}
	}
	return &Error{Host: r.host, Err: fmt.Errorf("%s: %w", op, err)}
}

// endSignal reads r and closes end at its end.
type endSignal struct {
	r    io.Reader
	end  chan struct{}
	once sync.Once
}

func (e *endSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.end) })
	}
	return n, err
}

// gatedWriter passes writes on until closed, then drops them. The first
// write error calls fail and is kept; later writes are dropped.
type gatedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	fail   func()
	err    error
	closed bool
	// begun, unless nil, is closed once the output has held the begin
	// marker (its last bytes so far in seen).
	begun chan struct{}
	seen  []byte
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.begun != nil {
		g.watchBegin(p)
	}
	if g.closed || g.err != nil {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		g.err = err
		if g.fail != nil {
			go g.fail()
		}
	}
	return len(p), nil
}

// watchBegin closes begun once the output so far holds the begin marker;
// the caller holds mu.
func (g *gatedWriter) watchBegin(p []byte) {
	select {
	case <-g.begun:
		return
	default:
	}
	g.seen = append(g.seen, p...)
	if bytes.Contains(g.seen, []byte(shellgen.BeginMarker)) {
		close(g.begun)
		g.seen = nil
		return
	}
	if keep := len(shellgen.BeginMarker); len(g.seen) > keep {
		g.seen = append(g.seen[:0], g.seen[len(g.seen)-keep:]...)
	}
}

func (g *gatedWriter) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *gatedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// stdinPipe is a session's stdin that a cancellation may close while the
// copy into it goes on: x/crypto's CloseWrite sets, unlocked, the flag
// each Write reads first, so the two must not overlap.
type stdinPipe struct {
	mu     sync.Mutex
	w      io.WriteCloser
	closed bool
}

func (p *stdinPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, io.ErrClosedPipe
	}
	return p.w.Write(b)
}

// Close sends the end of stdin, once.
func (p *stdinPipe) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.close()
}

// TryClose sends the end of stdin unless a write is under way (on a
// stalled link it can block until the session closes): the copy then
// ends with the session and closes what is left.
func (p *stdinPipe) TryClose() {
	if p.mu.TryLock() {
		p.close()
		p.mu.Unlock()
	}
}

func (p *stdinPipe) close() {
	if !p.closed {
		p.closed = true
		p.w.Close()
	}
}

// maxConfigFile bounds the ssh_config file Options.ConfigFile names.
const maxConfigFile = 16 << 20

// checkConfigFile refuses, before anything reads it, a config file that
// is not one (a device, a FIFO: /dev/zero, an endless pipe) or too large
// to be one: ssh and the parser would read it without end. /dev/null, the
// usual "no config", and a file that is not there (an empty one, as for
// ssh -F) pass.
func checkConfigFile(name string) error {
	if name == "" || name == os.DevNull {
		return nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("ssh config %s: not a regular file", name)
	}
	if fi.Size() > maxConfigFile {
		return fmt.Errorf("ssh config %s: %d bytes, more than %d MiB: not an ssh_config", name, fi.Size(), maxConfigFile>>20)
	}
	return nil
}
