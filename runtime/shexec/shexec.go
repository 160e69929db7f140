// Package shexec is how a runtime that can only run a command on its host
// (an exec of a container daemon, a command such as "kubectl exec -i POD
// --") runs bgjob's scripts there with the host's sh, and ends them:
// runtime/container and runtime/via share it, and a runtime written
// outside bgjob may use it too.
//
// The script's shell first reports its pid on stderr, a line of its own
// (PIDLine, read by PIDWriter), so that a second command can kill the
// script's process group once the caller gives up (KillScript): neither a
// daemon's exec nor a client killed on this machine ends the process on
// the host. A script too long for one argument goes first on stdin, read
// by shellgen.Bootstrap (Command).
package shexec

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/bgjob/bgjob/runtime/tail"
	"github.com/bgjob/bgjob/shellgen"
)

// pidPrefix starts the line that reports the shell's pid.
const pidPrefix = "bgjob-pid="

// PIDLine is the first command of a script that reports its pid: it
// writes the shell's pid on stderr, as a line of its own.
const PIDLine = "echo " + pidPrefix + "$$ >&2;"

// Command returns the command that runs script as "sh -c script",
// reporting its pid first (PIDLine), and the stdin to give it. Linux takes
// one argument of 128 KiB at most: a longer script goes first on stdin,
// read by a bootstrap (shellgen.Bootstrap), and the caller's stdin (none
// when nil) follows it.
func Command(script string, stdin io.Reader) ([]string, io.Reader) {
	if len(script) <= shellgen.MaxArgScript {
		return []string{"sh", "-c", PIDLine + script}, stdin
	}
	cmd := []string{"sh", "-c", PIDLine + shellgen.Bootstrap(), "sh", strconv.Itoa(len(script))}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return cmd, io.MultiReader(strings.NewReader(script), stdin)
}

// KillScript is the shell script that ends the script whose shell
// reported pid: its process group with KILL when the shell leads one (an
// exec of a container daemon and an SSH session each make one), else the
// shell alone. It always exits 0: a script that ended already is no
// failure. dash takes a group only after "--" ("-N" is an option to it);
// a kill that refuses "--" takes "-N".
func KillScript(pid int) string {
	p := strconv.Itoa(pid)
	return "kill -s KILL -- -" + p + " 2>/dev/null || kill -s KILL -" + p + " 2>/dev/null || kill -s KILL " + p + " 2>/dev/null; true"
}

// maxLine bounds a line of stderr kept while looking for the pid: a
// banner, a daemon's message.
const maxLine = 4096

// PIDWriter takes a script's stderr: the line PIDLine wrote is its pid,
// sent once on PID; the lines before it (a banner, the reason a shell did
// not start) and all that follows are kept in Tail. Writes must not
// overlap; Started and Pending may be called meanwhile.
type PIDWriter struct {
	mu sync.Mutex
	// PID receives the shell's pid, once.
	PID chan int
	// Tail keeps the end of the rest of stderr.
	Tail    tail.Buffer
	line    []byte
	started bool
	pid     int
}

// NewPIDWriter returns a PIDWriter that keeps 4 KiB of stderr.
func NewPIDWriter() *PIDWriter {
	return &PIDWriter{PID: make(chan int, 1), Tail: tail.Buffer{Max: 4096}}
}

// Started reports whether the shell has reported its pid: it has started
// and runs the script.
func (w *PIDWriter) Started() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started
}

func (w *PIDWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for !w.started && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p[:min(len(p), maxLine-len(w.line))]...)
			return n, nil
		}
		w.line = append(w.line, p[:min(i, maxLine-len(w.line))]...)
		p = p[i+1:]
		if v, ok := bytes.CutPrefix(w.line, []byte(pidPrefix)); ok {
			if pid, err := strconv.Atoi(string(v)); err == nil && pid > 0 {
				w.started, w.pid = true, pid
				w.PID <- pid
				w.line = nil
				break
			}
		}
		w.Tail.Write(append(w.line, '\n'))
		w.line = w.line[:0]
	}
	w.Tail.Write(p)
	return n, nil
}

// ReportedPID returns the pid the shell reported, 0 until it has.
func (w *PIDWriter) ReportedPID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid
}

// Pending returns the start of a line not ended yet, written before the
// pid: a prompt that waits for an answer ("Password: ").
func (w *PIDWriter) Pending() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return ""
	}
	return string(w.line)
}
