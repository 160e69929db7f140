package bgjob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bgjob/bgjob/internal/records"
)

// NativeCheckEnv, set to anything in the environment, makes each look made
// in Go on this machine also run its script and compare what the two
// printed, byte for byte: it fails on a difference. The e2e tests run
// with it. Set to "off", no look is made in Go: the scripts run alone
// (a test of what a script does on the host, such as which files it
// reads).
const NativeCheckEnv = "BGJOB_NATIVE_CHECK"

// native makes, in Go, the records a script would print (nativeStatus,
// nativeList, nativeLogs): a reader of them and a function that lets go
// of what it holds, or not ok where the script must run.
type native func() (r io.Reader, done func(), ok bool)

// nativeString is a native whose records are made at once.
func nativeString(make func() (string, bool)) native {
	return func() (io.Reader, func(), bool) {
		s, ok := make()
		return strings.NewReader(s), func() {}, ok
	}
}

// nativePieces is a native whose records are made at once, in pieces
// read one after the other; each is let go of once read.
func nativePieces(make func() ([]string, bool)) native {
	return func() (io.Reader, func(), bool) {
		p, ok := make()
		return &piecesReader{p}, func() {}, ok
	}
}

type piecesReader struct{ p []string }

func (r *piecesReader) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.p[0])
	if r.p[0] = r.p[0][n:]; r.p[0] == "" {
		r.p = r.p[1:]
	}
	return n, nil
}

// look hands h the records of script: those nat makes in Go where it can
// (compared with the script's under NativeCheckEnv), else the script's,
// run by exec (watch as exec's). script is made only when it runs.
func (c *Client) look(ctx context.Context, script func() string, watch bool, nat native, h records.Handler) error {
	check := os.Getenv(NativeCheckEnv)
	if check == "off" {
		return c.exec(ctx, script(), nil, watch, h)
	}
	r, done, ok := nat()
	if !ok {
		return c.exec(ctx, script(), nil, watch, h)
	}
	defer done()
	if check != "" {
		out, err := c.checkNative(ctx, script(), r, nat)
		if err != nil {
			return err
		}
		r = strings.NewReader(out)
	}
	_, err := answering(ctx, h).Decode(r)
	return err
}

// checkNative runs script, whose output r (what nat made) must equal, and
// returns the records to read, or an error naming the difference. A job
// can change between the two reads (a removal, the end of a job): a
// difference is looked at again, both ways, once. A wait's look that
// finds its jobs running is not compared.
func (c *Client) checkNative(ctx context.Context, script string, r io.Reader, nat native) (string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	made := string(b)
	// A wait's look that finds its jobs running is not compared: they
	// change while the script looks (their processes, their logs, their
	// end under way), and the look that ends the wait is compared.
	if strings.Contains(made, "\nW\tpending\n") {
		return made, nil
	}
	for try := 0; ; try++ {
		var sh bytes.Buffer
		if err := c.rt.Exec(ctx, script, nil, &sh); err != nil {
			return "", err
		}
		if sh.String() == made {
			return made, nil
		}
		if try == 1 {
			return "", fmt.Errorf("a read made in Go differs from its script's: %q, the script's %q", made, sh.String())
		}
		r, done, ok := nat()
		if !ok {
			return sh.String(), nil
		}
		b, err := io.ReadAll(r)
		done()
		if err != nil {
			return "", err
		}
		made = string(b)
	}
}
