package cli

import (
	"context"
	"io"
)

// whileRead on Windows does not watch w (no poll(2) on a pipe): a follow
// ends at the first write after its reader has gone.
func whileRead(ctx context.Context, _ io.Writer) (_ context.Context, gone func() bool, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, func() bool { return false }, cancel
}

// pipeUnread on Windows knows no pipe's unread bytes: bytes written count
// as read.
func pipeUnread(io.Writer) func() (int64, bool) { return nil }

// quietPipe on Windows has nothing to do: no SIGPIPE.
func quietPipe() func() { return func() {} }
