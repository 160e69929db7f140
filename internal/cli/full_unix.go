//go:build !windows

package cli

import "syscall"

// exeSuffix is what an executable's file name ends with here.
const exeSuffix = ""

// execFile replaces this process by the program at path, with args after
// its name and env: the same process, its signals, terminal and streams.
func execFile(path string, args, env []string) error {
	return syscall.Exec(path, append([]string{path}, args...), env)
}
