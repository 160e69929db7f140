//go:build !unix

package via

import "os/exec"

// ownSession leaves cmd as is: there are no sessions.
func ownSession(cmd *exec.Cmd) {}

// killSession kills the command.
func killSession(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// signalOf is 0: no signal ends a command.
func signalOf(e *exec.ExitError) int { return 0 }
