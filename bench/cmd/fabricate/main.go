//go:build !windows

// Command fabricate creates ended jobs in bgjob's on-disk format for the
// benchmark harness (bench/run.sh) and prints the id of the newest one.
//
//	fabricate -root DIR -w WORKSPACE -n 10000
//
// With -fresh it first removes the workspace, so that it holds exactly the
// jobs made (none with -n 0, and then it prints nothing).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgjob/bgjob/bench/fixture"
)

func main() {
	var o fixture.Options
	flag.StringVar(&o.Root, "root", "", "bgjob root directory (required)")
	flag.StringVar(&o.Workspace, "w", "default", "workspace")
	flag.IntVar(&o.N, "n", 10, "number of jobs")
	flag.IntVar(&o.LogLines, "lines", 200, "lines in each stdout.log")
	fresh := flag.Bool("fresh", false, "remove the workspace first")
	flag.Parse()
	if o.Root == "" || o.N < 0 || o.N == 0 && !*fresh {
		fmt.Fprintln(os.Stderr, "fabricate: error: -root and -n >= 1 (or -fresh and -n >= 0) are required")
		os.Exit(2)
	}
	if *fresh {
		if err := os.RemoveAll(filepath.Join(o.Root, o.Workspace)); err != nil {
			fmt.Fprintf(os.Stderr, "fabricate: error: %v\n", err)
			os.Exit(1)
		}
		if o.N == 0 {
			return
		}
	}
	ids, err := fixture.Make(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fabricate: error: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(ids[len(ids)-1])
}
