package local

import (
	"errors"
	"os/exec"
)

// errWindows is the local runtime's answer on Windows: jobs need a POSIX
// host (sh, process groups, signals), which SSH reaches.
var errWindows = errors.New("this machine runs Windows, and bgjob runs jobs on POSIX hosts only: give one with -H HOST (over SSH)")

func ownGroup(*exec.Cmd) error { return errWindows }
