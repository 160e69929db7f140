package bgjob

import (
	"context"
	"io"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// Answerer is implemented by runtimes that can answer some requests on
// their host themselves, without running the request's script, printing
// what the script would print, byte for byte (runtime/local answers a
// status, a wait's look, a list, a read of an ended job's logs and a
// simple launch in Go, on Linux). The client asks it first, once per
// request it may answer, and runs the script where it declines: the
// scripts stay the specification and the only way on other hosts.
type Answerer interface {
	// Answer returns the output of req's script, made otherwise, and
	// ok; or not ok, where the script must run. An error ends the
	// request (ok or not).
	Answer(ctx context.Context, req shellgen.Request) (out io.ReadCloser, ok bool, err error)
}

// look hands h the records of req: the runtime's answer where it gives
// one (Answerer), else those of req's script, run by exec (watch as
// exec's).
func (c *Client) look(ctx context.Context, req shellgen.Request, watch bool, h records.Handler) error {
	if a, ok := c.rt.(Answerer); ok {
		out, ok, err := a.Answer(ctx, req)
		if err != nil {
			return err
		}
		if ok {
			defer out.Close()
			_, err := answering(ctx, h).Decode(out)
			return err
		}
	}
	return c.exec(ctx, req.Text(), nil, watch, h)
}
