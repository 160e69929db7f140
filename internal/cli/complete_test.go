package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// A host that takes the connection and never answers gets the completion's
// bound (1 s), not its ConnectTimeout (60 s here): the shell is offered
// nothing, and no file names.
func TestCompletionOfASilentHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	entry := fmt.Sprintf("Host silent\n  HostName 127.0.0.1\n  Port %d\n  ConnectTimeout 60\n  StrictHostKeyChecking yes\n  UserKnownHostsFile %s\n",
		ln.Addr().(*net.TCPAddr).Port, filepath.Join(dir, "known_hosts"))
	if err := os.WriteFile(cfg, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"BGJOB_HOST", "BGJOB_HOST_TIMEOUT", "BGJOB_SSH_CONFIG", "BGJOB_WORKSPACE"} {
		t.Setenv(env, "")
	}
	// What a shell runs for "bgjob -H silent logs <Tab>" and the like.
	for _, line := range [][]string{
		{"-H", "silent", "logs", ""},
		{"-H", "silent", "-w", ""},
		{"-H", "silent", "run", "-n", ""},
	} {
		t.Run(strings.Join(line, " "), func(t *testing.T) {
			before := accepted.Load()
			var out, errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				args := append([]string{"__complete", "--root", filepath.Join(dir, "root"), "--ssh-config", cfg}, line...)
				done <- Run(context.Background(), args, strings.NewReader(""), &out, &errb)
			}()
			select {
			case code := <-done:
				if code != 0 || out.String() != ":36\n" {
					t.Errorf("exit %d, stdout %q: want 0 and only the directive :36 (no file names)", code, out.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the completion waited for the silent host")
			}
			if accepted.Load() == before {
				t.Error("the completion did not ask the host")
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	j := jobdir.Job{Meta: jobdir.Meta{ID: "20261202T085540-k3ptls", Name: "web", Command: "echo 'a\tb\nc'\x1b[31m " + strings.Repeat("x", 60)}, Status: jobdir.StatusRunning}
	want := "web, running: echo 'a b c' [31m " + strings.Repeat("x", 32) + "..."
	if got := describe(j, j.Name); got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got, want := describe(jobdir.Job{Meta: jobdir.Meta{Command: "true"}, Status: jobdir.StatusExited}, ""), "exited: true"; got != want {
		t.Errorf("describe without a name = %q, want %q", got, want)
	}
}
