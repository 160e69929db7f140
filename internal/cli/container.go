package cli

import (
	"errors"

	ctr "github.com/bgjob/bgjob/runtime/container"
)

// containerErrorKind is the --json kind of a container host's error: a
// container that is absent or stopped, or a daemon that cannot be
// reached, is "unreachable"; "" for other errors.
func containerErrorKind(err error) string {
	if errors.Is(err, ctr.ErrNoSuchContainer) || errors.Is(err, ctr.ErrNotRunning) || errors.Is(err, ctr.ErrDaemon) {
		return "unreachable"
	}
	return ""
}
