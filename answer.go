package bgjob

import (
	"bytes"
	"context"
	"io"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// Answerer is implemented by runtimes that can answer some requests on
// their host themselves, without running the request's script, reading
// and writing what the script would, byte for byte (runtime/local
// answers a status, a wait's look, a list, a read of the logs and a
// simple launch in Go, on Linux). The client asks it first, once per
// request it may answer, and runs the script where it declines: the
// scripts stay the specification and the only way on other hosts.
type Answerer interface {
	// Answer answers req as Exec would run req.Text(): it reads stdin
	// (nil: empty) and writes to stdout what the script would, and
	// returns once it is done, or once ctx ends. Not ok, having written
	// nothing, where the script must run.
	Answer(ctx context.Context, req shellgen.Request, stdin io.Reader, stdout io.Writer) (ok bool, err error)
}

// runner runs one request on the host: Exec's shape.
type runner func(ctx context.Context, stdin io.Reader, stdout io.Writer) error

// script is the runner of a script that no runtime answers otherwise.
func (c *Client) script(script string) runner {
	return func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		return c.rt.Exec(ctx, script, stdin, stdout)
	}
}

// request is the runner of req: the runtime's answer where it gives one
// (Answerer), else req's script. This, and look for an answer small
// enough to decode as it is, are the only places where the choice is
// made.
func (c *Client) request(req shellgen.Request) runner {
	return func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		if a, ok := c.rt.(Answerer); ok {
			if ok, err := a.Answer(ctx, req, stdin, stdout); ok || err != nil {
				return err
			}
		}
		return c.rt.Exec(ctx, req.Text(), stdin, stdout)
	}
}

// look hands h the records of req (run by request), watch as exec's.
func (c *Client) look(ctx context.Context, req shellgen.Request, watch bool, h records.Handler) error {
	if !watch && small(req) {
		if a, ok := c.rt.(Answerer); ok {
			// A small answer the runtime makes whole (a status, a page,
			// one look of a wait) is decoded here, as it is: no pipe, and
			// no goroutine, whose start on a second processor cost a
			// short bgjob call a thread.
			var b bytes.Buffer
			if ok, err := a.Answer(ctx, req, nil, &b); err != nil {
				return err
			} else if ok {
				_, err := answering(ctx, h).Decode(&b)
				return err
			}
		}
	}
	return c.execCommits(ctx, c.request(req), nil, watch, h, nil, false)
}

// small says whether req asks for a look whose answer is small and made
// whole before it is written: a status, a page of a list, one look of a
// wait (not a whole list, which may be megabytes, nor logs).
func small(req shellgen.Request) bool {
	switch p := req.Params().(type) {
	case shellgen.Status:
		return true
	case shellgen.List:
		return p.Max > 0
	case shellgen.Wait:
		return p.Once
	}
	return false
}
