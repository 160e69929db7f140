package cli

import (
	"math"

	"golang.org/x/sys/unix"
)

// closeRangeCloexec marks descriptors 3 and above close-on-exec with one
// close_range(2) (Linux 5.11); false where the kernel has none.
func closeRangeCloexec() bool {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil
}
