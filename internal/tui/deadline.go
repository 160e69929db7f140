package tui

import "time"

// The periods and limits of top and attach.
const (
	// DefaultInterval is how often top reads the jobs again by default
	// (TopOptions.Interval): over SSH the whole list. Locally, where file
	// events say when a job is made or removed or a job's file changes,
	// it is how often top looks for what changes without one: a wrapper
	// killed with SIGKILL (Client.MayHaveEnded, no script), and a job
	// that is neither running nor ended.
	DefaultInterval = time.Second
	// attachSendGrace is how long attach, as it ends, waits for the keys
	// typed last to reach the job: a send over a slow connection is not
	// lost, one that hangs does not hold the terminal.
	attachSendGrace = 3 * time.Second
	// topScanEvery is how often, locally, top reads again the jobs that
	// may still change, for their live processes, which come and go
	// without a file event: one status script for them all, whose scan of
	// the host's processes costs about 0.1 s of CPU (docs/benchmarks.md),
	// so not on every tick. The interval, when longer, is the period
	// instead.
	topScanEvery = 10 * time.Second
	// topGap is the least time between two reads of top: a burst of file
	// events is one read, and at most about ten redraws a second.
	topGap = 100 * time.Millisecond
	// topRedrawEvery is how often top draws its screen again without a
	// read: the durations it shows move on.
	topRedrawEvery = time.Second
)
