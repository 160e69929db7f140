// Command hello is the floor of bgjob's benchmarks (bench/run.sh): a Go
// hello-world binary, the least any Go command line can cost to start.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
