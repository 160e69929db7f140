package bgjob

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bgjob/bgjob/internal/records"
)

// The engine's time limits and periods (the public defaults, DefaultGrace,
// DefaultLaunchTimeout, DefaultMaxAge, MaxTimeout, are with the API they
// bound). The caller's ctx bounds every call besides.
const (
	// answerGrace is how long past a wait's timeout the client still
	// waits for the host's own answer, which reports the jobs as they
	// stand. After it the client gives up on the host, ends the script
	// there (its stdin closes, see bg_watchin) and reports the timeout
	// with the jobs as one look at them within standingGrace finds them
	// (none if the host does not answer).
	answerGrace = time.Second
	// standingGrace bounds that look at the jobs after a wait whose host
	// did not answer within answerGrace of its timeout (a loaded host, a
	// slow look).
	standingGrace = 3 * time.Second
	// commitPeriod: a long read with a cursor reports what was delivered
	// at least this often (and every commitEvery bytes).
	commitPeriod = time.Second
	// commitGrace bounds how long a read that ends early waits for its
	// last report to reach the host and the script to end, before the
	// script is cut; a launch whose caller has gone, for the script to end
	// by itself.
	commitGrace = 5 * time.Second
	// drainPoll is the longest pause between two looks at a reader that
	// has not read everything yet (a pipe gives no event for that), and
	// drainLimit how long the last report waits for it: a caller that
	// reads only once bgjob has ended (wait, then read) is not held
	// forever; what it reads after that is read again next time.
	drainPoll  = 50 * time.Millisecond
	drainLimit = 3 * time.Second
	// reportWait is how long a delivery waits for the host to read the
	// reports before it (reportsAhead): a committer in this process (a
	// read runtime/local answers) shares its processors with the copy,
	// and a reader killed while reports wait in memory would get again
	// all they covered (megabytes at the copy's speed), where a script's
	// committer reads them from a pipe that outlives the reader. A host
	// that has not read them in time maxMissed times in a row is not
	// waited for again in that read; one late once, on a busy machine,
	// is (waiting no more after one miss left a CI run's reader 6 MB
	// ahead of its cursor).
	reportWait = 100 * time.Millisecond
	// watchTick is how often a wait, follow or wait --for on this machine
	// looks without a file event: a wrapper killed with SIGKILL changes
	// no file.
	watchTick = time.Second
	// floodPause: a look of a follow that copied floodBytes or more is
	// followed by another this much later, without a watch: a job that
	// writes 100 MB/s in 8 KiB writes is looked at 50 times a second, and
	// no file event wakes the follow meanwhile (12,000 a second).
	floodPause = 20 * time.Millisecond
	// scriptEvery is how often at most a wait --for on this machine runs
	// its script while Go's reading of the pattern finds nothing.
	scriptEvery = 3 * time.Second
	// launchWatch bounds the watch of a launch under way: a job directory
	// without meta.json is one for a minute after it last changed
	// (bg_launching).
	launchWatch = 70 * time.Second
)

// Within bounds one call to host ("" for this machine), connecting
// included, to d from now: it returns ctx ending after d (ctx itself when
// d <= 0) and end, which releases it and returns the call's error, or,
// when the bound rather than ctx ended the call, an *Error of KindNoAnswer
// that names host and d ("web1: no answer within 30s"; Host is host, Err
// wraps ErrNoAnswer) in place of whatever the call returned then. Fleet
// bounds each host with it (WithHostTimeout), and so do bgjob's command
// line and MCP server a call of their own.
func Within(ctx context.Context, host string, d time.Duration) (context.Context, func(error) error) {
	return within(ctx, host, d, false)
}

// WithinAnswer is Within for a call that waits (Wait, WaitFor, Logs with
// Follow): d bounds connecting and the host's first answer, the first
// script of the call begun there, and is lifted then; the wait's own
// timeout, if any, bounds the rest. A host whose session opens but never
// runs bgjob's script (a ForceCommand, a login shell waiting on a prompt)
// is given up on at d, as by Within.
func WithinAnswer(ctx context.Context, host string, d time.Duration) (context.Context, func(error) error) {
	return within(ctx, host, d, true)
}

// within is Within, or with untilAnswer WithinAnswer.
func within(ctx context.Context, host string, d time.Duration, untilAnswer bool) (context.Context, func(error) error) {
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	expired := &Error{Kind: KindNoAnswer, Host: host, Err: fmt.Errorf("%w within %v", ErrNoAnswer, d)}
	return bound(ctx, time.Now().Add(d), expired, untilAnswer)
}

// answerKey is the context key of the function that lifts the bounds of a
// context made by WithinAnswer (and those it was made in).
type answerKey struct{}

// answering returns h, whose Begun also lifts the bounds of ctx made by
// WithinAnswer: every script prints its boot record first, in Go's
// answers too, so the host's first answer is the first Begun.
func answering(ctx context.Context, h records.Handler) records.Handler {
	lift, ok := ctx.Value(answerKey{}).(func())
	if !ok {
		return h
	}
	begun := h.Begun
	h.Begun = func() {
		lift()
		if begun != nil {
			begun()
		}
	}
	return h
}

// bound returns ctx ending at deadline and end, which releases it and
// returns the call's error, or expired when the deadline rather than ctx
// ended the call. The clock counts as well as the context: a socket given
// the deadline can report it before the context's own timer has fired.
// With untilAnswer the deadline holds only until the host has answered
// (see answering).
func bound(ctx context.Context, deadline time.Time, expired error, untilAnswer bool) (context.Context, func(error) error) {
	if !untilAnswer {
		bctx, cancel := context.WithDeadlineCause(ctx, deadline, expired)
		return bctx, boundEnd(ctx, bctx, cancel, deadline, expired, func() bool { return false })
	}
	cctx, cancelCause := context.WithCancelCause(ctx)
	t := time.AfterFunc(time.Until(deadline), func() { cancelCause(expired) })
	var answered atomic.Bool
	outer, _ := ctx.Value(answerKey{}).(func())
	bctx := context.WithValue(cctx, answerKey{}, func() {
		// A timer that has fired has cut the call: the answer came late.
		if t.Stop() {
			answered.Store(true)
		}
		if outer != nil {
			outer()
		}
	})
	cancel := func() {
		t.Stop()
		cancelCause(nil)
	}
	return bctx, boundEnd(ctx, bctx, cancel, deadline, expired, answered.Load)
}

// boundEnd is the end of a bound made by bound: it releases bctx and
// returns the call's error, or expired when the deadline rather than ctx
// ended the call (a host that answered is past the deadline's reach).
func boundEnd(ctx, bctx context.Context, cancel func(), deadline time.Time, expired error, answered func() bool) func(error) error {
	return func(err error) error {
		cut := ctx.Err() == nil && (errors.Is(context.Cause(bctx), expired) || !answered() && !time.Now().Before(deadline))
		cancel()
		if cut && err != nil {
			// The deadline's words, and what the call says it did
			// before the cut (a removal, the jobs it may have removed).
			exp := withSaid(expired, err)
			var d interface{ didBefore(error) error }
			if errors.As(err, &d) {
				return d.didBefore(exp)
			}
			return exp
		}
		return err
	}
}

// keepSaid is err, the error of a call whose ctx ended, with what the
// transport said (the Said method of xerr, the runtime's error), if
// anything: the deadline's error quotes it (withSaid).
func keepSaid(err, xerr error) error {
	var s interface{ Said() string }
	if !errors.As(xerr, &s) || s.Said() == "" {
		return err
	}
	return saidError{err: err, said: s.Said()}
}

// saidError is the error of a call whose ctx ended while the host's
// transport had said something (see keepSaid).
type saidError struct {
	err  error
	said string
}

func (e saidError) Error() string { return e.err.Error() }
func (e saidError) Unwrap() error { return e.err }
func (e saidError) Said() string  { return e.said }

// withSaid is expired, an error of the deadline that cut a call, with what
// the host's transport said before it was cut, when the call's error err
// carries it (see Runtime): a prompt that waited for an answer.
func withSaid(expired, err error) error {
	var s interface{ Said() string }
	var e *Error
	if !errors.As(err, &s) || s.Said() == "" || !errors.As(expired, &e) {
		return expired
	}
	return &Error{Kind: e.Kind, Host: e.Host, Err: fmt.Errorf("%w: it said: %s", e.Err, s.Said())}
}

// waitBound bounds a wait of timeout begun at since (0: ctx as is; see
// timeLeft) on the client's clock, answerGrace after the host's: end turns
// the error of a wait the bound cut short into one wrapping ErrTimeout,
// which names timeout.
func waitBound(ctx context.Context, timeout time.Duration, since time.Time) (context.Context, func(error) error) {
	if timeout <= 0 {
		return ctx, func(err error) error { return err }
	}
	return bound(ctx, time.Now().Add(timeLeft(timeout, since)+answerGrace), waitExpired(timeout), false)
}

// waitExpired is the error of a wait of timeout that the host did not
// answer in time, whether it was not reached (Fleet.waiting) or reached
// and silent since (waitBound): the same words, as the user sees the same
// thing.
func waitExpired(timeout time.Duration) error {
	return fmt.Errorf("waiting %s: %w (the host did not answer)", waitLabel(timeout), ErrTimeout)
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
