package bgjob_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
)

// TestWithin: a call the bound cut short gets an *Error of KindNoAnswer
// that names the host and the limit; a call that ended in time keeps its
// own error, the caller's cancellation stays the caller's, and a limit of
// 0 bounds nothing.
func TestWithin(t *testing.T) {
	bg := context.Background()
	t.Run("cut", func(t *testing.T) {
		for _, within := range []func(context.Context, string, time.Duration) (context.Context, func(error) error){bgjob.Within, bgjob.WithinAnswer} {
			ctx, end := within(bg, "web1", 50*time.Millisecond)
			<-ctx.Done()
			err := end(ctx.Err())
			var e *bgjob.Error
			if !errors.As(err, &e) || e.Host != "web1" || !errors.Is(err, bgjob.ErrNoAnswer) || bgjob.KindOf(err) != bgjob.KindNoAnswer {
				t.Errorf("%v (%#v), want an *Error of host web1 and kind no_answer", err, e)
			}
			if got, want := err.Error(), "web1: no answer within 50ms"; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
		}
	})
	t.Run("in time", func(t *testing.T) {
		_, end := bgjob.Within(bg, "web1", time.Minute)
		refused := errors.New("refused")
		if err := end(refused); err != refused {
			t.Errorf("%v, want the call's own error", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(bg)
		ctx, end := bgjob.Within(cctx, "web1", time.Minute)
		cancel()
		<-ctx.Done()
		if err := end(ctx.Err()); !errors.Is(err, context.Canceled) || errors.Is(err, bgjob.ErrNoAnswer) {
			t.Errorf("%v, want the caller's cancellation", err)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		ctx, end := bgjob.Within(bg, "web1", 0)
		if ctx != bg || end(nil) != nil {
			t.Error("a limit of 0 bounded the call")
		}
	})
}
