//go:build unix

package via

import (
	"os/exec"
	"syscall"
)

// ownSession makes cmd start a session of its own: no controlling
// terminal (a password prompt fails instead of waiting on one), and a
// process group that killSession ends whole.
func ownSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killSession kills the process group of cmd, which leads it.
func killSession(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// signalOf is the signal that killed the command of e, 0 if none.
func signalOf(e *exec.ExitError) int {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
