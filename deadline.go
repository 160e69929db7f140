package bgjob

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultHostTimeout is how long the CLI gives a host to answer a call
// that does not wait (run without --wait, status, ls, logs without -f, rm,
// prune and send; stop gets its grace on top), connecting included.
const DefaultHostTimeout = 30 * time.Second

// answerGrace is how long past a wait's timeout the client still waits for
// the host's own answer, which reports the jobs as they stand. After it the
// client gives up on the host, ends the script there (its stdin closes,
// see bg_watchin) and reports the timeout with the jobs as one look at them
// within standingGrace finds them (none if the host does not answer).
const answerGrace = time.Second

// Within bounds one call to one host, connecting included, to d from now:
// it returns ctx ending after d (ctx itself when d <= 0) and end, which
// releases it and returns the call's error, or, when the bound rather than
// ctx ended the call, an error wrapping ErrNoAnswer ("no answer within
// 30s") in place of whatever the call returned then.
func Within(ctx context.Context, d time.Duration) (context.Context, func(error) error) {
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	expired := fmt.Errorf("%w within %v", ErrNoAnswer, d)
	return bound(ctx, time.Now().Add(d), expired)
}

// bound returns ctx ending at deadline and end, which releases it and
// returns the call's error, or expired when the deadline rather than ctx
// ended the call. The clock counts as well as the context: a socket given
// the deadline can report it before the context's own timer has fired.
func bound(ctx context.Context, deadline time.Time, expired error) (context.Context, func(error) error) {
	bctx, cancel := context.WithDeadlineCause(ctx, deadline, expired)
	return bctx, func(err error) error {
		cut := ctx.Err() == nil && (errors.Is(context.Cause(bctx), expired) || !time.Now().Before(deadline))
		cancel()
		if cut && err != nil {
			return expired
		}
		return err
	}
}

// waitBound bounds a wait of timeout begun at since (0: ctx as is; see
// timeLeft) on the client's clock, answerGrace after the host's: end turns
// the error of a wait the bound cut short into one wrapping ErrTimeout,
// which names timeout.
func waitBound(ctx context.Context, timeout time.Duration, since time.Time) (context.Context, func(error) error) {
	if timeout <= 0 {
		return ctx, func(err error) error { return err }
	}
	expired := fmt.Errorf("waiting %s: %w (the host did not answer)", waitLabel(timeout), ErrTimeout)
	return bound(ctx, time.Now().Add(timeLeft(timeout, since)+answerGrace), expired)
}

// timeLeft is what is left now of a wait's timeout (0: none) that began at
// since (zero: now), such as before its caller connected: at least a
// moment, so that a host reached at the deadline still reports the jobs as
// they are.
func timeLeft(timeout time.Duration, since time.Time) time.Duration {
	if timeout <= 0 || since.IsZero() {
		return timeout
	}
	return max(timeout-time.Since(since), time.Millisecond)
}

// waitLabel is a wait's timeout as its errors say it, the whole timeout
// the caller gave (never what was left of it once connected), to the
// hundredth of a second.
func waitLabel(timeout time.Duration) string {
	if timeout >= time.Second {
		return timeout.Round(10 * time.Millisecond).String()
	}
	return timeout.Round(time.Millisecond).String()
}
