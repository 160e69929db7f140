//go:build !linux && !windows

package cli

// fionread is 0 where a pipe's write end cannot tell what is unread (the
// BSDs answer FIONREAD only on the read end): see pipeUnread.
const fionread = 0
