package bgjob_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// lingering is a host whose scripts are seen to exit only once release is
// closed, after their whole output has arrived (a container's stream that
// closes late, then its exec inspect); ctxs receives each script's context.
type lingering struct {
	bgjob.Runtime
	release chan struct{}
	ctxs    chan context.Context
}

func (r lingering) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	var b bytes.Buffer
	err := r.Runtime.Exec(ctx, script, stdin, &b)
	stdout.Write(b.Bytes())
	r.ctxs <- ctx
	<-r.release
	return err
}

// A verb returns once its script's output is whole, without waiting for
// the runtime to see the script exit, and the script, left to exit by
// itself, is not ended when the caller's context ends.
func TestVerbReturnsAtTheEndMarker(t *testing.T) {
	rt := lingering{Runtime: local.New(), release: make(chan struct{}), ctxs: make(chan context.Context, 1)}
	c, err := bgjob.NewClient(rt, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}})
		ran <- err
	}()
	sctx := <-rt.ctxs
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(time.Minute):
		close(rt.release)
		t.Fatal("Run waited for the runtime to see its script exit")
	}
	cancel()
	if sctx.Err() != nil {
		t.Errorf("the script's context ended with the caller's: %v", sctx.Err())
	}
	close(rt.release)
	if !eventually(time.Minute, func() bool { return sctx.Err() != nil }) {
		t.Error("the script's context did not end once the runtime returned")
	}
}
