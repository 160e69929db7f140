package local

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bgjob/bgjob/shellgen"
)

// CheckEnv, set to anything in the environment, makes each request this
// runtime answers in Go (Answer) also run its script and compare what the
// two printed, byte for byte: the answer fails on a difference. The e2e
// tests run with it. Set to "off", nothing is answered in Go: the scripts
// run alone (a test of what a script does on the host, such as which
// files it reads).
const CheckEnv = "BGJOB_NATIVE_CHECK"

// reportGrace bounds how long a launch made in Go that its context ended
// waits for the wrapper's report (it comes in milliseconds): a wrapper
// that said nothing is then known to have made no job.
const reportGrace = 5 * time.Second

// The kinds of refusal (E records) a launch made in Go prints, as
// launch.sh prints them.
const (
	errKindCwd    = "cwd"    // the working directory does not exist
	errKindRoot   = "root"   // the root or workspace is unsafe or cannot be made
	errKindExists = "exists" // the job directory already exists
	errKindIO     = "io"     // a file or directory could not be written
	errKindStart  = "start"  // the wrapper did not start
)

// answerer answers requests in Go for the jobs under root and workspace;
// procs is what its Runtime remembers of the host's processes (nil:
// nothing).
type answerer struct {
	root, workspace string
	procs           *procCache
}

// Answer answers req in Go where it can, on Linux: a status, one look
// of a wait (Wait.Once), a list, a plain read of a job's logs, and a
// simple launch (see launch). It writes to stdout what req's script
// would print, byte for byte, or says not ok, having written nothing,
// where the script must run: this is a copy of the scripts, which stay
// the specification, compared with them in tests and, under CheckEnv, at
// every answer that does not change while it is made (not a running
// job's logs, which grow). Elsewhere than on Linux it answers nothing.
func (r *Runtime) Answer(ctx context.Context, req shellgen.Request, stdin io.Reader, stdout io.Writer) (ok bool, err error) {
	check := os.Getenv(CheckEnv)
	if check == "off" {
		return false, nil
	}
	t := req.Target()
	a := answerer{root: t.Root, workspace: t.Workspace, procs: &r.procs}
	if l, launch := req.Params().(shellgen.Launch); launch {
		// A launch cannot be made twice: under CheckEnv it is made in Go
		// all the same (what the tests compare is the job directory, and
		// every read of it then made in Go is checked against its
		// script's).
		s, ok, err := a.launch(ctx, l, req.Files())
		if !ok || err != nil {
			return ok, err
		}
		_, err = io.WriteString(stdout, s)
		return true, err
	}
	made := func() (io.Reader, func(), bool, bool) { return a.look(ctx, req.Params(), stdin) }
	rd, done, stable, ok := made()
	if !ok {
		return false, nil
	}
	defer done()
	if check != "" && stable {
		s, err := r.checkAnswer(ctx, req.Text(), rd, made)
		if err != nil {
			return true, err
		}
		rd = strings.NewReader(s)
	}
	_, err = io.Copy(stdout, ctxReader{ctx, rd})
	return true, err
}

// ctxReader reads r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// checkAnswer runs script, whose output rd (what made made) must equal,
// and returns the records to read, or an error naming the difference. A
// job can change between the two reads (a removal, the end of a job): a
// difference is looked at again, both ways, up to three times (a wrapper
// ending on a loaded machine takes tens of milliseconds between its
// ended_at and its exit_code). A wait's look that
// finds its jobs running is not compared.
func (r *Runtime) checkAnswer(ctx context.Context, script string, rd io.Reader, made func() (io.Reader, func(), bool, bool)) (string, error) {
	b, err := io.ReadAll(rd)
	if err != nil {
		return "", err
	}
	got := string(b)
	// A wait's look that finds its jobs running is not compared: they
	// change while the script looks (their processes, their logs, their
	// end under way), and the look that ends the wait is compared.
	if strings.Contains(got, "\nW\tpending\n") {
		return got, nil
	}
	for try := 0; ; try++ {
		var sh bytes.Buffer
		if err := r.Exec(ctx, script, nil, &sh); err != nil {
			return "", err
		}
		if sh.String() == got {
			return got, nil
		}
		if try == 3 {
			return "", fmt.Errorf("a read made in Go differs from its script's: %q, the script's %q", got, sh.String())
		}
		rd, done, _, ok := made()
		if !ok {
			return sh.String(), nil
		}
		b, err := io.ReadAll(rd)
		done()
		if err != nil {
			return "", err
		}
		got = string(b)
	}
}
