// Command fabricate creates ended jobs in bgjob's on-disk format for the
// benchmark harness (bench/run.sh) and prints the id of the newest one.
//
//	fabricate -root DIR -w WORKSPACE -n 10000
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/bgjob/bgjob/bench/fixture"
)

func main() {
	var o fixture.Options
	flag.StringVar(&o.Root, "root", "", "bgjob root directory (required)")
	flag.StringVar(&o.Workspace, "w", "default", "workspace")
	flag.IntVar(&o.N, "n", 10, "number of jobs")
	flag.IntVar(&o.LogLines, "lines", 200, "lines in each stdout.log")
	flag.Parse()
	if o.Root == "" || o.N < 1 {
		fmt.Fprintln(os.Stderr, "fabricate: error: -root and -n >= 1 are required")
		os.Exit(2)
	}
	ids, err := fixture.Make(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fabricate: error: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(ids[len(ids)-1])
}
