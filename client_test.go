package bgjob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
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

// stalled is a host that takes scripts and never answers, after printing
// the begin record when begin is set (a host that stalls mid-answer);
// execs counts the scripts it was given.
type stalled struct {
	bgjob.Runtime
	begin bool
	execs *atomic.Int32
}

func (r stalled) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	r.execs.Add(1)
	if r.begin {
		io.WriteString(stdout, "\n@@bgjob-begin@@\nB\t\n")
	}
	<-ctx.Done()
	return ctx.Err()
}

func (r stalled) Host() string { return "stalled" }

// A wait whose host never began its script does not look at the jobs
// after its timeout (a look the host would not answer either, which made
// the wait standingGrace longer than its timeout); a host that began it
// and then stalled gets that look.
func TestWaitLooksAgainOnlyAtAHostThatAnswered(t *testing.T) {
	for _, begin := range []bool{false, true} {
		execs := new(atomic.Int32)
		c, err := bgjob.NewClient(stalled{Runtime: local.New(), begin: begin, execs: execs}, "/nonexistent/root", "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Wait(context.Background(), []string{"x"}, bgjob.WaitOptions{Timeout: 200 * time.Millisecond})
		if !errors.Is(err, bgjob.ErrTimeout) {
			t.Errorf("begin %v: Wait = %v, want a timeout", begin, err)
		}
		want := int32(1)
		if begin {
			want = 2
		}
		if n := execs.Load(); n != want {
			t.Errorf("begin %v: %d scripts, want %d", begin, n, want)
		}
	}
}
