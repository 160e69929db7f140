package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"

	"github.com/bgjob/bgjob/runtime/shexec"
)

// maxExecs bounds the execs running at once through one Runtime.
const maxExecs = 16

// The container runtime's time limits and periods; the caller's ctx bounds
// every call besides.
const (
	// copyGrace is how long a cancelled Exec waits for the script's
	// output to stop coming once the script is killed and the stream
	// closed: the daemon's last bytes, not the script's.
	copyGrace = time.Second
	// exitPollFirst and exitPollMax are the first and the longest pause
	// between the looks at an exec's exit status, doubled after each: the
	// daemon records it a moment after the output ends, so the first
	// looks come quickly and none waits long.
	exitPollFirst = time.Millisecond
	exitPollMax   = 100 * time.Millisecond
	// pidWait is how long killing a cancelled script waits for its pid,
	// the first thing it writes, which comes at once from a shell that
	// runs: a script without it by then is given up on (its stdin is
	// closed already, which ends the scripts that wait).
	pidWait = time.Second
	// killGrace bounds the exec that kills a cancelled script's process
	// group: one more exec through the daemon, short, but past the
	// caller's ctx, which has ended.
	killGrace = 5 * time.Second
	// idleConnTimeout is how long a connection to the daemon stays open
	// unused, for the next exec: one verb's scripts reuse it, and an idle
	// process holds none for long.
	idleConnTimeout = 30 * time.Second
)

// Options configures Dial. The zero value reads the environment.
type Options struct {
	// Getenv reads the environment (DOCKER_HOST, DOCKER_CERT_PATH,
	// DOCKER_TLS_VERIFY, DOCKER_API_VERSION, DOCKER_CONTEXT,
	// DOCKER_CONFIG, HOME, CONTAINER_HOST, XDG_RUNTIME_DIR); nil means
	// os.Getenv. The docker configuration and contexts are read from
	// the file system.
	Getenv func(string) string
}

// Runtime runs scripts in one container through one API client. It is
// safe for concurrent use; at most 16 scripts run at once, the rest wait.
type Runtime struct {
	host string
	addr Address
	eng  *engine
	sem  chan struct{}
}

// Dial returns a runtime of host ("docker://[USER@]CONTAINER" or
// "podman://[USER@]CONTAINER"). It asks the daemon nothing: the first
// Exec's exec create is what finds the container absent or stopped, which
// saves every call a round trip. Errors of reaching the container,
// Dial's and Exec's, are a *Error: they start with the host and wrap
// ErrNoSuchContainer, ErrNotRunning, ErrNoShell or ErrDaemon, e.g.
// "docker://web: no such container". ctx is not used; it stays for the
// dial of transports that need one.
func Dial(ctx context.Context, host string, opts Options) (*Runtime, error) {
	addr, err := ParseAddress(host)
	if err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	daemon, err := daemonHost(addr.Engine, getenv)
	if err != nil {
		return nil, &Error{Host: host, Err: &daemonError{err.Error()}}
	}
	// Docker's: DOCKER_CERT_PATH, DOCKER_TLS_VERIFY and
	// DOCKER_API_VERSION too, as the docker command reads them.
	eng, err := newEngine(daemon, addr.Engine == Docker, getenv)
	if err != nil {
		return nil, &Error{Host: host, Err: &daemonError{err.Error()}}
	}
	return &Runtime{host: host, addr: addr, eng: eng, sem: make(chan struct{}, maxExecs)}, nil
}

// refused words the daemon's refusal of an exec (create or start). Its
// 404 is the container's absence. Its other refusals do not say the
// container's state alike (Docker: 409 "is not running", "is paused",
// "is restarting"; Podman: 500 "container state improper" for one that
// exited, 409 for one paused), so the container is inspected then, and
// only then, to say which.
func (r *Runtime) refused(ctx context.Context, err error) error {
	if s := statusOf(err); s != 0 && s != http.StatusNotFound {
		c, ierr := r.eng.inspectContainer(ctx, r.addr.Container)
		switch {
		case statusOf(ierr) == http.StatusNotFound:
			// Removed since.
			err = ierr
		case ierr == nil && (c.State == nil || !c.State.Running || c.State.Paused || c.State.Status != "running"):
			state := "unknown"
			if c.State != nil {
				state = c.State.Status
			}
			return &Error{Host: r.host, Err: fmt.Errorf("%w (%s)", ErrNotRunning, state)}
		}
	}
	return r.apiErr(ctx, err)
}

// apiErr words an error of the API: the container's absence, a daemon
// that cannot be reached, or the daemon's answer.
func (r *Runtime) apiErr(ctx context.Context, err error) error {
	var ce *connError
	unreached := errors.As(err, &ce)
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || unreached):
		return ctx.Err()
	case statusOf(err) == http.StatusNotFound:
		return &Error{Host: r.host, Err: ErrNoSuchContainer}
	case errors.Is(err, fs.ErrPermission) || unreached && r.denied():
		return &Error{Host: r.host, Err: &daemonError{fmt.Sprintf("permission denied on the %s socket %s", r.addr.Engine, r.eng.daemon)}}
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, fs.ErrNotExist):
		return &Error{Host: r.host, Err: &daemonError{fmt.Sprintf("no %s daemon answers at %s", r.addr.Engine, r.eng.daemon)}}
	case unreached:
		// A TLS handshake that failed, a link that broke.
		return &Error{Host: r.host, Err: &daemonError{fmt.Sprintf("cannot reach the %s daemon at %s: %s", r.addr.Engine, r.eng.daemon, oneLine(ce.err))}}
	case statusOf(err) == http.StatusConflict:
		// The daemon refuses execs in a container that stopped.
		return &Error{Host: r.host, Err: ErrNotRunning}
	}
	return &Error{Host: r.host, Err: err}
}

// denied reports whether the daemon's unix socket refuses this user: the
// client's "cannot connect" does not say why.
func (r *Runtime) denied() bool {
	if r.eng.network != "unix" {
		return false
	}
	c, err := net.Dial("unix", r.eng.addr)
	if err == nil {
		c.Close()
	}
	return errors.Is(err, fs.ErrPermission)
}

// Host returns the host as given to Dial.
func (r *Runtime) Host() string { return r.host }

// Close releases the client's connections. Jobs that scripts started keep
// running in the container.
func (r *Runtime) Close() error {
	r.eng.close()
	return nil
}

// Exec runs script in the container as "sh -c script", as the container's
// user or the host's USER. It copies stdin to the script (which sees end of
// file once stdin is drained; at once when stdin is nil) and the script's
// stdout to stdout as it arrives, and returns once the script has exited
// and its output is drained. A non-zero exit returns an *ExitError
// carrying the end of the script's stderr. Cancelling ctx closes the
// script's stdin, kills its process group (with a second exec) and returns
// ctx.Err().
func (r *Runtime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	if strings.IndexByte(script, 0) >= 0 {
		return &Error{Host: r.host, Err: errors.New("script: holds a NUL byte")}
	}
	cmd, stdin := shexec.Command(script, stdin)
	if err := r.acquire(ctx); err != nil {
		return err
	}
	defer func() { <-r.sem }()

	id, err := r.eng.execCreate(ctx, r.addr.Container, execConfig{
		User: r.addr.User, AttachStdin: stdin != nil, AttachStdout: true, AttachStderr: true, Cmd: cmd,
	})
	if err != nil {
		return r.refused(ctx, err)
	}
	conn, err := r.eng.execStart(ctx, id)
	if err != nil {
		return r.refused(ctx, err)
	}
	defer conn.Close()

	x := attach(conn, stdin, stdout)
	var cerr error
	select {
	case cerr = <-x.copied:
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		// The client may close the stream once ctx ends, before this
		// sees ctx end.
		return r.cancel(ctx, x)
	}
	return r.result(ctx, id, x, cerr)
}

// acquire takes one of the Runtime's exec slots, waiting while all are
// taken; it returns ctx.Err() once ctx has ended. Exec gives the slot back
// when it returns.
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

// execution is a started exec as Exec runs it: stdin being copied in, the
// output being copied out and split into stdout (outw) and stderr (errw).
type execution struct {
	conn    stream
	closeIn func()
	errw    *shexec.PIDWriter
	outw    *writeErr
	// copied receives the end of copying the output.
	copied chan error
}

// attach starts copying stdin (none when nil) to the exec of conn and its
// output to stdout and to the pidWriter of its stderr.
func attach(conn stream, stdin io.Reader, stdout io.Writer) *execution {
	x := &execution{
		conn:    conn,
		closeIn: sync.OnceFunc(conn.closeWrite),
		errw:    shexec.NewPIDWriter(),
		copied:  make(chan error, 1),
	}
	if stdin != nil {
		go func() {
			io.Copy(conn.Conn, stdin)
			x.closeIn()
		}()
	}
	out := stdout
	if out == nil {
		out = io.Discard
	}
	x.outw = &writeErr{w: out}
	go func() {
		_, err := stdcopy.StdCopy(x.outw, x.errw, conn.Reader)
		x.copied <- err
	}()
	return x
}

// cancel ends the exec of a cancelled Exec and returns ctx.Err(). The
// script sees its stdin end (scripts that wait end then, bg_watchin); its
// process group is killed in any case.
func (r *Runtime) cancel(ctx context.Context, x *execution) error {
	x.closeIn()
	r.kill(x.errw)
	x.conn.Close()
	select {
	case <-x.copied:
	case <-time.After(copyGrace):
	}
	return ctx.Err()
}

// result is what Exec returns once the output of exec id has ended, cerr
// being the end of its copy: a failed copy to stdout, a broken stream, a
// shell that never started, the script's non-zero exit, or nil.
func (r *Runtime) result(ctx context.Context, id string, x *execution, cerr error) error {
	var werr *writeErrT
	if errors.As(cerr, &werr) {
		// stdout failed: end the script rather than let it block.
		r.kill(x.errw)
		return &Error{Host: r.host, Err: fmt.Errorf("copying stdout: %w", werr.err)}
	}
	if cerr != nil {
		return &Error{Host: r.host, Err: fmt.Errorf("running script: %w", cerr)}
	}
	code, err := r.exitCode(ctx, id)
	if err != nil {
		return err
	}
	if code == 0 {
		return nil
	}
	if !x.errw.Started() {
		return &Error{Host: r.host, Err: fmt.Errorf("%w: %s", ErrNoShell, x.noShell(code))}
	}
	return &ExitError{Host: r.host, Status: code, Stderr: x.errw.Tail.LastLines(10)}
}

// noShell says why the shell never ran its first command, having exited
// with code: the container has no sh, or not the user. The daemon's words
// come on stderr (Podman) or stdout (Docker).
func (x *execution) noShell(code int) string {
	if msg := firstLine(x.errw.Tail.LastLines(10)); msg != "" {
		return msg
	}
	if msg := firstLine(string(x.outw.head)); msg != "" {
		return msg
	}
	return fmt.Sprintf("status %d", code)
}

// exitCode returns the exit status of exec id, once the daemon has
// recorded it (it may lag behind the end of the output a moment).
func (r *Runtime) exitCode(ctx context.Context, id string) (int, error) {
	delay := exitPollFirst
	for {
		running, code, err := r.eng.execInspect(ctx, id)
		if err != nil {
			return 0, r.apiErr(ctx, err)
		}
		if !running {
			return code, nil
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		delay = min(2*delay, exitPollMax)
	}
}

// kill kills the process group of the script whose stderr is w, once its
// pid is known (it is the first thing the script writes).
func (r *Runtime) kill(w *shexec.PIDWriter) {
	var pid int
	select {
	case pid = <-w.PID:
	case <-time.After(pidWait):
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), killGrace)
	defer cancel()
	r.run(ctx, []string{"sh", "-c", shexec.KillScript(pid)})
}

// run runs argv in the container without input or output, waiting for it
// to end.
func (r *Runtime) run(ctx context.Context, argv []string) {
	id, err := r.eng.execCreate(ctx, r.addr.Container, execConfig{User: r.addr.User, AttachStdout: true, Cmd: argv})
	if err != nil {
		return
	}
	conn, err := r.eng.execStart(ctx, id)
	if err != nil {
		return
	}
	defer conn.Close()
	io.Copy(io.Discard, conn.Reader)
}

// writeErr marks the errors of writing to the caller's stdout, to tell
// them from the stream's, and keeps the first bytes written (head).
type writeErr struct {
	w    io.Writer
	head []byte
}

type writeErrT struct{ err error }

func (e *writeErrT) Error() string { return e.err.Error() }

func (w *writeErr) Write(p []byte) (int, error) {
	if len(w.head) < 512 {
		w.head = append(w.head, p[:min(len(p), 512-len(w.head))]...)
	}
	n, err := w.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return n, &writeErrT{err}
	}
	return n, nil
}

// firstLine is the first line of s that is not blank, trimmed.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
