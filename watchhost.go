package bgjob

import (
	"context"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// hostWatchAgain is the least time between two starts of the host's watch
// of a follow (watchHost): a session that ends at once, again and again
// (a host that refuses the script), makes the follow look as often as it
// polled before the watch.
const hostWatchAgain = eventsPoll

// watchHost returns, on a runtime that is not a Watcher (SSH, a
// container), the watch of the jobs refs name (none: the workspace's,
// with all every workspace's) that a follow of their events wakes on: one
// script on the host (shellgen.WatchScript) for as long as ctx lasts,
// which calls changed at once, then at each change that may make an event
// (a job made or removed, a file of a job's events appearing, a wrapper
// gone). Like a file event it is a trigger, never a read: the caller
// looks again. When the script's session ends before ctx does (a dropped
// connection), changed is called once more, so that the caller's look
// meets the fault, and the script starts again, hostWatchAgain at the
// soonest after its last start. On a Watcher it returns nil: WatchJobs
// and WatchFiles wake a follow there.
func (c *Client) watchHost(refs []string, all bool) func(ctx context.Context, changed func()) {
	if _, ok := c.rt.(Watcher); ok {
		return nil
	}
	t := c.target()
	if all && len(refs) == 0 {
		t.Workspace = ""
	}
	return func(ctx context.Context, changed func()) {
		req, err := shellgen.WatchRequest(t, shellgen.Watch{Refs: refs, AllWorkspaces: all})
		if err != nil {
			// The follow's own look refuses the same refs and target.
			return
		}
		h := records.Handler{Wait: func(state string) {
			if state == "changed" {
				changed()
			}
		}}
		for {
			began := time.Now()
			// Its error is met by the look that changed brings about.
			_ = c.look(ctx, req, true, h)
			if ctx.Err() != nil {
				return
			}
			changed()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(began.Add(hostWatchAgain))):
			}
		}
	}
}
