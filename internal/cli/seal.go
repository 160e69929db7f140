//go:build !windows

package cli

import (
	"os"
	"strconv"
	"syscall"
)

// sealDescriptors marks every descriptor of this process above stderr
// close-on-exec. What bgjob starts (a job's wrapper, a script's shell,
// ssh) gets its stdin, stdout and stderr and the descriptors bgjob hands
// it, never one its caller left open by chance: a job would hold such a
// descriptor for its whole life, and a caller waiting for the end of a
// pipe it passed along (a harness's pipe, a parent's IPC channel) would
// wait as long. bgjob's own descriptors are close-on-exec already.
func sealDescriptors() {
	if closeRangeCloexec() {
		return
	}
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
