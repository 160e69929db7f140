package mcp_test

import (
	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

func localRuntime() bgjob.Runtime { return local.New() }
