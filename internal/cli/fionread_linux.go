package cli

import "golang.org/x/sys/unix"

// fionread is the ioctl that tells how many bytes a pipe holds unread
// (FIONREAD), which Linux answers on the pipe's write end too.
const fionread = unix.TIOCINQ
