package bgjob_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// Run a job on this machine, wait for it and read its output. Over SSH,
// use a runtime from runtime/ssh instead: ssh.Dial(ctx, "host", ssh.Options{}).
func Example() {
	root, err := os.MkdirTemp("", "bgjob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	ctx := context.Background()
	c, err := bgjob.NewClient(local.New(), root, "example")
	if err != nil {
		log.Fatal(err)
	}
	job, err := c.Run(ctx, bgjob.Spec{Name: "greet", Argv: []string{"echo hello; exit 3"}})
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := c.Wait(ctx, []string{job.ID}, bgjob.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs[0].Name, jobs[0].Status, *jobs[0].ExitCode)
	if _, err := c.Logs(ctx, "greet", bgjob.LogOptions{}, os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
	// Output:
	// greet exited 3
	// hello
}

// Stop a job: TERM to its process group, KILL after the grace period. The
// job is reported killed, with the status its wrapper recorded.
func ExampleClient_Stop() {
	root, err := os.MkdirTemp("", "bgjob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	ctx := context.Background()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		log.Fatal(err)
	}
	job, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep", "60"}})
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := c.Stop(ctx, []string{job.ID}, bgjob.StopOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs[0].Status, *jobs[0].ExitCode, jobs[0].Reason)
	// Output: killed 143 stop
}
