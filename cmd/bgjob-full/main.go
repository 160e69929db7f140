// Command bgjob-full is the whole of bgjob's command line: every verb and
// every transport. bgjob, which leaves out the SSH and container
// transports, the MCP server and the terminal views to start faster, runs
// it, found beside itself, for a request that needs them; install both
// (go install github.com/bgjob/bgjob/cmd/...).
package main

import (
	"os"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/full"
)

func main() {
	cli.SetFull(full.New())
	os.Exit(cli.Main())
}
