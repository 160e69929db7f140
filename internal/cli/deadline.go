package cli

import (
	"time"

	"github.com/bgjob/bgjob"
)

// The command line's time limits and periods. Besides these, each host's
// part of a verb has --host-timeout (bgjob.DefaultHostTimeout), and what the
// verb waits for on top (limit); a job's own grace is the library's
// (bgjob.DefaultGrace); top's and attach's periods are package tui's.
const (
	// completionBound bounds completion's call to the SSH hosts of -H:
	// one that has not answered within it offers nothing, as a shell
	// waits for a Tab about that long (a ControlMaster connection answers
	// in time). --host-timeout, given on the line being completed,
	// replaces it.
	completionBound = time.Second
	// localBound bounds completion on this machine, which only a stuck
	// file system reaches.
	localBound = 10 * time.Second
	// interruptedLook bounds run's look at a job whose launch an
	// interrupt cut short (it may run all the same): it comes after the
	// user asked to stop, so it is short.
	interruptedLook = 2 * time.Second
)

// limit is how long a host has for its part of a verb that does not wait:
// --host-timeout, extra on top (stop's grace); 0 when --host-timeout is 0.
func (a *app) limit(extra time.Duration) time.Duration {
	if a.hostTimeout <= 0 {
		return 0
	}
	return a.hostTimeout + max(extra, 0)
}

// stopGrace is stop's time on top of --host-timeout: its grace (nil:
// bgjob.DefaultGrace).
func stopGrace(grace *time.Duration) time.Duration {
	if grace == nil {
		return bgjob.DefaultGrace
	}
	return max(*grace, 0)
}

// rmGrace is rm's time on top of --host-timeout: with --force, the grace
// of the stop that comes first.
func rmGrace(force bool) time.Duration {
	if force {
		return bgjob.DefaultGrace
	}
	return 0
}

// hostLabel is "HOST: " for a remote host, "" for this machine.
func hostLabel(host string) string {
	if host == "" {
		return ""
	}
	return host + ": "
}
