package cli

import (
	"context"
	"errors"

	"github.com/bgjob/bgjob"
	ctr "github.com/bgjob/bgjob/runtime/container"
)

// dialContainer connects to a container host, docker://[USER@]CONTAINER
// or podman://[USER@]CONTAINER (see ctr.IsHost), and returns the runtime
// and what releases it.
func dialContainer(ctx context.Context, host string) (bgjob.Runtime, func(), error) {
	r, err := ctr.Dial(ctx, host, ctr.Options{})
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// containerErrorKind is the --json kind of a container host's error: a
// container that is absent or stopped, or a daemon that cannot be
// reached, is "unreachable"; "" for other errors.
func containerErrorKind(err error) string {
	if errors.Is(err, ctr.ErrNoSuchContainer) || errors.Is(err, ctr.ErrNotRunning) || errors.Is(err, ctr.ErrDaemon) {
		return "unreachable"
	}
	return ""
}
