// Command bgjob runs shell commands as detached background jobs, locally or
// on remote hosts over SSH. It links the verbs and the transports to this
// machine and --via hosts; for SSH hosts, containers, bgjob mcp, top and
// attach it runs bgjob-full, installed beside it (see cli.Full).
package main

import (
	"os"

	"github.com/bgjob/bgjob/internal/cli"
)

func main() { os.Exit(cli.Main()) }
