package bgjob_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// Run one job on several hosts with one id and wait for it everywhere.
// Here each "host" is a job root on this machine; over SSH the DialFunc
// would call ssh.Dial(ctx, host, ssh.Options{}) and close the runtime in
// the function it returns.
func ExampleFleet() {
	base, err := os.MkdirTemp("", "bgjob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)

	dial := func(ctx context.Context, host string) (*bgjob.Client, func(), error) {
		if host == "gone" {
			return nil, nil, fmt.Errorf("connection refused")
		}
		c, err := bgjob.NewClient(local.New(), filepath.Join(base, host), "")
		return c, func() {}, err
	}
	f := bgjob.NewFleet([]string{"web1", "web2", "gone"}, dial, 32)
	ctx := context.Background()
	runs := f.Run(ctx, bgjob.Spec{Argv: []string{"exit 4"}})
	id := runs[0].Value.ID
	for _, r := range f.Wait(ctx, []string{id}, bgjob.WaitOptions{}) {
		if r.Err != nil {
			fmt.Println(r.Err)
			continue
		}
		fmt.Println(r.Host, r.Value[0].ID == id, r.Value[0].Status, *r.Value[0].ExitCode)
	}
	// Output:
	// web1 true exited 4
	// web2 true exited 4
	// gone: connection refused
}
