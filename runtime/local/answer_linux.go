package local

import (
	"context"
	"io"
	"strings"

	"github.com/bgjob/bgjob/shellgen"
)

// look makes in Go the records the script of a look asking params would
// print, given stdin (a read with a cursor reads the reader's reports): a reader of them, a function that lets go of what it holds, and
// whether the script, run at once, would print the same (stable: not so
// for a running job's logs, which grow meanwhile); or not ok where the
// script must run.
func (a answerer) look(ctx context.Context, params any, stdin io.Reader) (r io.Reader, done func(), stable, ok bool) {
	made := func(s string, ok bool) (io.Reader, func(), bool, bool) {
		return strings.NewReader(s), func() {}, true, ok
	}
	switch p := params.(type) {
	case shellgen.Status:
		return made(a.status(p))
	case shellgen.Wait:
		if !p.Once {
			return nil, nil, false, false
		}
		return made(a.wait(p.Refs, p.Any))
	case shellgen.List:
		pieces, ok := a.list(p)
		return &piecesReader{pieces}, func() {}, true, ok
	case shellgen.Logs:
		return a.logs(ctx, p, stdin)
	}
	return nil, nil, false, false
}

// piecesReader reads pieces one after the other, as many as fit in a
// read (a read a piece woke the decoding goroutine once a job); each is
// let go of once read.
type piecesReader struct{ p []string }

func (r *piecesReader) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	n := 0
	for len(r.p) > 0 && n < len(b) {
		c := copy(b[n:], r.p[0])
		n += c
		if r.p[0] = r.p[0][c:]; r.p[0] == "" {
			r.p = r.p[1:]
		}
	}
	return n, nil
}
