// Package local is the bgjob runtime for the machine bgjob runs on: it runs
// shellgen scripts with /bin/sh, and watches job files with fsnotify so that
// waiting and following logs need not poll.
package local

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bgjob/bgjob/shellgen"
)

// Runtime runs scripts on the local machine.
type Runtime struct {
	// Shell is the POSIX shell that runs scripts; "" means /bin/sh.
	Shell string
	// procs is what its looks remember of the host's processes: a
	// Runtime that looks again (a server, a follow) reads less.
	procs procCache
}

// New returns a runtime for the local machine.
func New() *Runtime { return &Runtime{} }

// DefaultRoot returns /tmp/bgjob-$UID for the user running bgjob, the root
// a script would compute, without running one.
func (r *Runtime) DefaultRoot() string { return fmt.Sprintf("/tmp/bgjob-%d", os.Getuid()) }

// Host returns "", the name of the local machine.
func (r *Runtime) Host() string { return "" }

// Exec runs script as "sh -c script" in a process group of its own, which
// is killed when ctx is cancelled. Jobs the script launches are in sessions
// of their own and are not affected.
func (r *Runtime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	sh := r.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	cmd := exec.CommandContext(ctx, sh, "-c", script)
	if len(script) > shellgen.MaxArgScript {
		// Too long for one argument: the script goes first on stdin.
		cmd = exec.CommandContext(ctx, sh, "-c", shellgen.Bootstrap(), "sh", strconv.Itoa(len(script)))
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		stdin = io.MultiReader(strings.NewReader(script), stdin)
	}
	if err := ownGroup(cmd); err != nil {
		return err
	}
	// A safety net for a descendant that keeps the script's output open;
	// generous, since on a loaded machine reading what the script wrote
	// can lag well behind its exit.
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 8 << 10}
	var stdinW *os.File
	if stdin != nil {
		// Hand the script a real pipe so that Wait does not wait for stdin
		// to end: scripts that watch stdin end when it closes.
		pr, pw, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("creating stdin pipe: %w", err)
		}
		cmd.Stdin, stdinW = pr, pw
		defer pr.Close()
		go func() {
			io.Copy(pw, stdin)
			pw.Close()
		}()
	}
	err := cmd.Run()
	if stdinW != nil {
		stdinW.Close()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return fmt.Errorf("running script: %w: %s", err, msg)
		}
		return fmt.Errorf("running script: %w", err)
	}
	return nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Watch reports changes to the files in dirs: it sends the base name of
// each file created, written or renamed into place in one of them, until
// ctx ends. Names are dropped, never queued, while the receiver is busy.
func (r *Runtime) Watch(ctx context.Context, dirs []string) (<-chan string, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching job files: %w", err)
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, fmt.Errorf("watching %s: %w", d, err)
		}
	}
	ch := make(chan string, 16)
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				select {
				case ch <- filepath.Base(ev.Name):
				default:
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return ch, nil
}
