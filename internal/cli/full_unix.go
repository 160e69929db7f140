//go:build !windows

package cli

import (
	"os"
	"syscall"
)

// exeSuffix is what an executable's file name ends with here.
const exeSuffix = ""

// handerPID is the pid of the bgjob that hands a request to bgjob-full:
// this process's own, which the exec kept.
func handerPID() int { return os.Getpid() }

// execFile replaces this process by the program at path, with args after
// its name and env: the same process, its signals, terminal and streams.
func execFile(path string, args, env []string) error {
	return syscall.Exec(path, append([]string{path}, args...), env)
}
