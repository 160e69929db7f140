package host_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/host"
	ctr "github.com/bgjob/bgjob/runtime/container"
	"github.com/bgjob/bgjob/runtime/local"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// TestDial: each form of a host gets its transport, named as given.
func TestDial(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		host string
		want func(bgjob.Runtime) bool
	}{
		{"", func(r bgjob.Runtime) bool { _, ok := r.(*local.Runtime); return ok }},
		{"docker://web", func(r bgjob.Runtime) bool { _, ok := r.(*ctr.Runtime); return ok }},
		{"podman://bob@sandbox", func(r bgjob.Runtime) bool { _, ok := r.(*ctr.Runtime); return ok }},
	} {
		rt, release, err := host.Dial(ctx, tc.host, host.Options{})
		if err != nil {
			t.Errorf("Dial(%q): %v", tc.host, err)
			continue
		}
		if !tc.want(rt) || rt.Host() != tc.host {
			t.Errorf("Dial(%q) = %T naming %q", tc.host, rt, rt.Host())
		}
		release()
	}
	// Anything else is an SSH host: one that refuses the connection is
	// an *ssh.Error naming it.
	_, _, err := host.Dial(ctx, "127.0.0.1:1", host.Options{SSH: sshrt.Options{ConfigFile: os.DevNull}})
	var se *sshrt.Error
	if !errors.As(err, &se) || se.Host != "127.0.0.1:1" {
		t.Errorf("Dial of an SSH host that refuses: %v (%T), want an *ssh.Error naming 127.0.0.1:1", err, err)
	}
}

// Reach a host by the name a user gives it: "" is this machine; a
// container is docker://NAME or podman://NAME; anything else is an SSH
// host, [user@]host[:port] or an ssh_config alias.
func ExampleClient() {
	root, err := os.MkdirTemp("", "bgjob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	ctx := context.Background()
	c, release, err := host.Client(ctx, "", root, "example", host.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer release()
	job, err := c.Run(ctx, bgjob.Spec{Argv: []string{"echo", "hi"}})
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := c.Wait(ctx, []string{job.ID}, bgjob.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs[0].Status, *jobs[0].ExitCode)
	// Output: exited 0
}
