package bgjob

import (
	"context"
	"errors"
	"time"
)

// errPending is what a wait that looks once returns while the jobs run.
var errPending = errors.New("jobs still running")

// watched runs look, which returns errPending while what it waits for has
// not happened, on a runtime that is a Watcher: once the watch of dirs is
// in place (what changed before it, it could not see), then after each
// change whose file name keep accepts (nil: any), once a second (a wrapper
// killed with SIGKILL changes no file) and a last time at timeout (0:
// never), until look returns anything but errPending. timedOut reports
// that the last look was the one at the timeout.
func watched(ctx context.Context, w Watcher, dirs []string, timeout time.Duration, keep func(name string) bool, look func(context.Context) error) (timedOut bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := w.Watch(ctx, dirs)
	if err != nil {
		return false, err
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := look(ctx); !errors.Is(err, errPending) || timedOut {
			return timedOut, err
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
