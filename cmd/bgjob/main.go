// Command bgjob runs shell commands as detached background jobs, locally or
// on remote hosts over SSH.
package main

import (
	"os"

	"github.com/bgjob/bgjob/internal/cli"
)

func main() { os.Exit(cli.Main()) }
