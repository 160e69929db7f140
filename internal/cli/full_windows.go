package cli

import (
	"errors"
	"os"
	"os/exec"
)

// exeSuffix is what an executable's file name ends with here.
const exeSuffix = ".exe"

// handerPID is the pid of the bgjob that hands a request to bgjob-full:
// this process's parent, which runs it as a child.
func handerPID() int { return os.Getppid() }

// execFile runs the program at path with args and env on this process's
// streams, and returns its exit status as an errFullRan: Windows cannot
// replace a process by another.
func execFile(path string, args, env []string) error {
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return errFullRan{0}
	case errors.As(err, &ee):
		return errFullRan{ee.ExitCode()}
	}
	return err
}
