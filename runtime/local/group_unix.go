//go:build !windows

package local

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own, killed as a whole when
// cmd's context ends.
func ownGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return nil
}
