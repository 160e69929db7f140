package bgjob

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errPending is what a wait that looks once returns while the jobs run.
var errPending = errors.New("jobs still running")

// errFlood is errPending from a look of a follow that copied floodBytes
// or more: watched looks again after floodPause, without the watch
// meanwhile, and makes the watch again once a look returns errPending.
var errFlood = fmt.Errorf("%w: a flood", errPending)

// floodBytes: a look of a follow on this machine that copied this much or
// more is followed by another floodPause later, without a watch.
const floodBytes = 64 << 10

// watch starts w's watch of dirs, and returns the function that ends it.
func watch(ctx context.Context, w Watcher, dirs []string) (<-chan string, context.CancelFunc, error) {
	wctx, cancel := context.WithCancel(ctx)
	events, err := w.Watch(wctx, dirs)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return events, cancel, nil
}

// drained takes the names that wait in events, and reports whether keep
// (nil: any) accepted one of them.
func drained(events <-chan string, keep func(name string) bool) bool {
	again := false
	for {
		select {
		case name := <-events:
			if keep == nil || keep(name) {
				again = true
			}
		default:
			return again
		}
	}
}

// watched runs look, which returns errPending while what it waits for has
// not happened, on a runtime that is a Watcher: once the watch of dirs is
// in place (what changed before it, it could not see), then after each
// change whose file name keep accepts (nil: any; the changes that came
// while it looked count as one), once a second (a wrapper
// killed with SIGKILL changes no file) and a last time at timeout (0:
// never), until look returns anything but errPending. timedOut reports
// that the last look was the one at the timeout.
func watched(ctx context.Context, w Watcher, dirs []string, timeout time.Duration, keep func(name string) bool, look func(context.Context) error) (timedOut bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, unwatch, err := watch(ctx, w, dirs)
	if err != nil {
		return false, err
	}
	defer func() { unwatch() }()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(watchTick)
	defer tick.Stop()
	unwatched := false // a watch made again failed: the tick alone wakes
	for {
		err := look(ctx)
		if !errors.Is(err, errPending) || timedOut {
			return timedOut, err
		}
		if errors.Is(err, errFlood) {
			// Not a wake for each write: the watch goes until the
			// flood is over.
			if events != nil {
				unwatch()
				events = nil
			}
			select {
			case <-time.After(floodPause):
			case <-deadline:
				timedOut = true
			case <-ctx.Done():
				return false, ctx.Err()
			}
			continue
		}
		if events == nil && !unwatched {
			// Watched again, then a look at once: what changed
			// before the watch was in place, it could not see. Where
			// it cannot be (the directory gone, no inotify instance
			// left), the looks go on by the tick.
			ev, un, err := watch(ctx, w, dirs)
			if err != nil {
				unwatched = true
				continue
			}
			events, unwatch = ev, un
			continue
		}
		// The changes that came during the look: one look more sees
		// them all.
		if events != nil && drained(events, keep) {
			continue
		}
		select {
		case name := <-events:
			if keep != nil && !keep(name) {
				continue
			}
		case <-tick.C:
		case <-deadline:
			timedOut = true
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}
