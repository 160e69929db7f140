// Command libstatus is bgjob's status of one job made by the library alone
// (the root package and runtime/local, none of the CLI, the MCP server,
// the terminal views or the container runtime linked): what a look would
// cost if bgjob were not one binary (bench/start.sh). Built with -tags
// ssh it links runtime/ssh too, as any bgjob that reaches hosts must.
//
//	libstatus ROOT ID
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: libstatus ROOT ID")
		os.Exit(2)
	}
	c, err := bgjob.NewClient(local.New(), os.Args[1], "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	jobs, err := c.Status(context.Background(), os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	j := jobs[0]
	fmt.Printf("%s\t%s\t%d\n", j.ID, j.Status, j.LiveProcesses)
}
