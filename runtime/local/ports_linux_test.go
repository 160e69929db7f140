package local

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/shellgen"
)

// TestNativePortsAreTheScripts: a status or an ls that asks for ports,
// made in Go, prints what the script prints (bg_ports) under each shell,
// byte for byte: the ports of a job's group (IPv4 and IPv6, loopback and
// every address, one socket shared by two processes) and of its escapee
// (setsid), none for a job that listens on none or has ended.
func TestNativePortsAreTheScripts(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	root := t.TempDir()
	ctx := context.Background()
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	// Listens on an IPv4 and an IPv6 address, then forks: the child holds
	// the same sockets.
	listen := py + ` -c 'import os, socket, time
a = socket.socket(); a.bind(("127.0.0.1", 0)); a.listen()
b = socket.socket(socket.AF_INET6); b.bind(("::", 0)); b.listen()
c = socket.socket(socket.AF_INET6); c.bind(("::1", 0)); c.listen()
os.fork(); time.sleep(60)'`
	escapee := `setsid ` + py + ` -c 'import socket, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(); time.sleep(60)' & wait`
	cmds := map[string]string{"group": listen, "escapee": escapee, "none": "sleep 60", "ended": "true"}
	want := map[string]int{"group": 3, "escapee": 1}
	var ids, dirs []string
	names := []string{}
	for name, cmd := range cmds {
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{cmd}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
		ids, dirs, names = append(ids, j.ID), append(dirs, j.Dir), append(names, name)
	}
	for i, name := range names {
		if !settled(func() bool {
			jobs, err := c.StatusWith(ctx, bgjob.StatusOptions{Ports: true}, ids[i])
			return err == nil && len(jobs[0].Ports) == want[name] && (name != "ended" || !jobs[0].Status.Active())
		}) {
			t.Fatalf("%s: its ports never came", name)
		}
	}
	shells := nativeShells(t)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			got := compareLookPorts(t, c, shells, dirs, ids[i:i+1], nil, true)
			if n := strings.Count(got, "\np\t"); n != want[name] {
				t.Errorf("status: %q, want %d p records", got, want[name])
			}
		})
	}
	t.Run("ls", func(t *testing.T) {
		got := compareLookPorts(t, c, shells, dirs, nil, &shellgen.List{Ports: true}, false)
		if n := strings.Count(got, "\np\t"); n != 4 {
			t.Errorf("ls: %q, want 4 p records", got)
		}
	})
}
