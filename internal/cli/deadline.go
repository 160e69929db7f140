package cli

import (
	"time"

	"github.com/bgjob/bgjob"
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
