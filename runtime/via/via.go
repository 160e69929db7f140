package via

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bgjob/bgjob/runtime/shexec"
	"github.com/bgjob/bgjob/shellgen"
)

// The via runtime's time limits; the caller's ctx bounds every call
// besides.
const (
	// pidWait is how long killing a cancelled script waits for its pid,
	// which a shell that runs reports at once.
	pidWait = time.Second
	// killGrace bounds the second run of the command that kills a
	// cancelled script on the host: one more command, short, but past
	// the caller's ctx, which has ended.
	killGrace = 5 * time.Second
	// drainGrace is how long the output may go on once the command has
	// exited (a process it left holding stdout or stderr), and how long a
	// command killed here may take to exit.
	drainGrace = time.Second
)

// Runtime runs scripts on one host by running its command once per
// script. It is safe for concurrent use.
type Runtime struct {
	host string
	argv []string
}

// New returns a runtime of host reached through command, a command line
// as Split reads it in which %h stands for the host (see Expand). It runs
// nothing: the first Exec finds a command that cannot run or a host that
// cannot be reached. Its errors wrap ErrCommand.
func New(command, host string) (*Runtime, error) {
	words, err := Split(command)
	if err != nil {
		return nil, &Error{Host: host, Err: err}
	}
	argv, err := Expand(words, host)
	if err != nil {
		return nil, &Error{Host: host, Err: err}
	}
	return &Runtime{host: host, argv: argv}, nil
}

// Host returns the host as given to New.
func (r *Runtime) Host() string { return r.host }

// Close releases nothing: each script's command has ended with it. Jobs
// that scripts started keep running on the host.
func (r *Runtime) Close() error { return nil }

// Exec runs script on the host with its sh, by running the command
// followed by "sh -s" (see the package's documentation). It copies stdin
// to the script (which sees end of file once stdin is drained; at once
// when stdin is nil) and the script's stdout to stdout as it arrives, and
// returns once the command has exited and its output is drained. A
// non-zero exit of the script returns an *ExitError carrying the end of
// its stderr; a command that cannot run, or ends before the host's shell
// has started, an *Error carrying what it said on stderr. Cancelling ctx
// closes the script's stdin, kills its process group on the host and the
// command here, and returns ctx.Err(), or, when the command had said
// something before the host's shell started (a prompt), an *Error whose
// CutError wraps ctx.Err() and carries it.
func (r *Runtime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	if strings.IndexByte(script, 0) >= 0 {
		return &Error{Host: r.host, Err: errors.New("script: holds a NUL byte")}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	x, err := r.start(stdout)
	if err != nil {
		return err
	}
	defer x.stdout.Close()
	// The bootstrap goes at once; the script only once the shell runs
	// it: sh reads ahead whatever its stdin holds, and would take the
	// script, and the script's own stdin, for commands of its own.
	boot := bootText(len(script))
	if _, err := io.WriteString(x.stdin, boot); err != nil {
		x.closeIn()
	}
	select {
	case <-x.started:
		go x.feed(io.MultiReader(strings.NewReader(script), orEmpty(stdin)))
	case <-x.exited:
		x.closeIn()
	case <-ctx.Done():
		return r.cancel(ctx, x)
	}
	select {
	case <-x.exited:
	case <-ctx.Done():
		return r.cancel(ctx, x)
	}
	x.closeIn()
	return r.result(x)
}

// bootText is what the host's shell reads first on stdin, as one command
// it reads whole before running it: report the shell's pid, read the
// script of n bytes that follows on stdin, run it, and exit with its
// status, reading nothing more as commands.
func bootText(n int) string {
	return "{\n" + shexec.PIDLine + "\nset -- " + strconv.Itoa(n) + "\n" + shellgen.Bootstrap() + "\nexit\n}\n"
}

// orEmpty is stdin, or an empty reader when nil.
func orEmpty(stdin io.Reader) io.Reader {
	if stdin == nil {
		return strings.NewReader("")
	}
	return stdin
}

// execution is one run of the command, as Exec runs it.
type execution struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	closeIn func()
	stdout  *os.File
	stderr  *shexec.PIDWriter
	out     *outWriter
	// started is closed once the host's shell has reported its pid.
	started chan struct{}
	// exited is closed once the command has exited and its output has
	// ended (or drainGrace has passed); err is then Wait's error.
	exited chan struct{}
	err    error
	// copied receives the end of copying stdout.
	copied chan error
}

// start starts the command, its stdout copied to stdout and its stderr
// read for the shell's pid.
func (r *Runtime) start(stdout io.Writer) (*execution, error) {
	argv := append(append([]string{}, r.argv...), "sh", "-s")
	cmd := exec.Command(argv[0], argv[1:]...)
	ownSession(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, &Error{Host: r.host, Err: err}
	}
	cmd.Stdout = pw
	x := &execution{cmd: cmd, stdout: pr, stderr: shexec.NewPIDWriter(), started: make(chan struct{}), exited: make(chan struct{}), copied: make(chan error, 1)}
	cmd.Stderr = x.stderr
	cmd.WaitDelay = drainGrace
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, &Error{Host: r.host, Err: fmt.Errorf("running %s: %w", argv[0], err)}
	}
	x.stdin = in
	x.closeIn = sync.OnceFunc(func() { in.Close() })
	if stdout == nil {
		stdout = io.Discard
	}
	x.out = &outWriter{w: stdout}
	go func() {
		_, err := io.Copy(x.out, pr)
		if err != nil {
			// stdout failed: end the script rather than let it block.
			r.kill(x)
		}
		x.copied <- err
	}()
	go func() {
		select {
		case <-x.stderr.PID:
			close(x.started)
		case <-x.exited:
		}
	}()
	go func() {
		x.err = cmd.Wait()
		select {
		case <-x.copied:
		case <-time.After(drainGrace):
		}
		close(x.exited)
	}()
	return x, nil
}

// feed copies in to the script, then closes its stdin.
func (x *execution) feed(in io.Reader) {
	io.Copy(x.stdin, in)
	x.closeIn()
}

// cancel ends the run of a cancelled Exec and returns ctx.Err(): the
// script sees its stdin end (scripts that wait end then, bg_watchin), its
// process group on the host is killed, and so is the command here.
func (r *Runtime) cancel(ctx context.Context, x *execution) error {
	x.closeIn()
	r.kill(x)
	select {
	case <-x.exited:
	case <-time.After(drainGrace):
	}
	if said := x.said(); said != "" {
		return &Error{Host: r.host, Err: &CutError{Err: ctx.Err(), Stderr: said}}
	}
	return ctx.Err()
}

// said is what the command said on stderr while the host's shell had
// not started, "" once it has.
func (x *execution) said() string {
	if x.stderr.Started() {
		return ""
	}
	return strings.TrimSpace(x.stderr.Tail.LastLines(3) + x.stderr.Pending())
}

// kill kills the script's process group on the host, once its pid is
// known, by a second run of the command, then the command's own process
// group here.
func (r *Runtime) kill(x *execution) {
	select {
	case <-x.started:
		ctx, cancel := context.WithTimeout(context.Background(), killGrace)
		defer cancel()
		r.run(ctx, shexec.KillScript(x.pid()))
	case <-x.exited:
		return
	case <-time.After(pidWait):
	}
	killSession(x.cmd)
}

// pid is the pid the host's shell reported; started is closed.
func (x *execution) pid() int { return x.stderr.ReportedPID() }

// run runs script on the host, without input or output, waiting for it
// to end or ctx to.
func (r *Runtime) run(ctx context.Context, script string) {
	argv := append(append([]string{}, r.argv...), "sh", "-s")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	ownSession(cmd)
	cmd.Stdin = strings.NewReader(script + "\n")
	cmd.Cancel = func() error { killSession(cmd); return nil }
	cmd.WaitDelay = drainGrace
	cmd.Run()
}

// result is what Exec returns once the command has exited: a failed copy
// to stdout, a command that ended before the shell started, the script's
// non-zero exit, or nil.
func (r *Runtime) result(x *execution) error {
	if err := x.out.failed(); err != nil {
		return &Error{Host: r.host, Err: fmt.Errorf("copying stdout: %w", err)}
	}
	err := x.err
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	if !x.stderr.Started() {
		return &Error{Host: r.host, Err: x.unstarted(r.argv[0], err)}
	}
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &ExitError{Host: r.host, Status: exitStatus(exit), Stderr: x.stderr.Tail.LastLines(10)}
	}
	return &Error{Host: r.host, Err: fmt.Errorf("running %s: %w", r.argv[0], err)}
}

// unstarted says why the host's shell never started, the command having
// ended with err: what the command said on stderr.
func (x *execution) unstarted(name string, err error) error {
	said := x.said()
	how := "exited"
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		how = fmt.Sprintf("exited with status %d", exitStatus(exit))
	}
	msg := fmt.Sprintf("%s %s before the host's sh started", name, how)
	if said != "" {
		msg += ": " + said
	}
	return errors.New(msg)
}

// outWriter passes the output on, keeping the first error of writing it.
type outWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.mu.Lock()
		o.err = err
		o.mu.Unlock()
	}
	return n, err
}

func (o *outWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
