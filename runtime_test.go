package bgjob_test

import (
	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// The runtimes have the optional capabilities their docs promise.
var (
	_ bgjob.Watcher       = (*local.Runtime)(nil)
	_ bgjob.DefaultRooter = (*local.Runtime)(nil)
	_ bgjob.Connection    = (*sshrt.Runtime)(nil)
)
