package bgjob_test

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/bench/fixture"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// benchJobs fabricates n ended jobs (docs/format.md) in a fresh root and
// returns a client for their workspace through rt (runtime/local when nil)
// and their ids, oldest first.
func benchJobs(b *testing.B, rt bgjob.Runtime, n int) (*bgjob.Client, []string) {
	b.Helper()
	root := filepath.Join(b.TempDir(), "root")
	ids, err := fixture.Make(fixture.Options{Root: root, Workspace: "bench", N: n})
	if err != nil {
		b.Fatal(err)
	}
	if rt == nil {
		rt = local.New()
	}
	c, err := bgjob.NewClient(rt, root, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return c, ids
}

// BenchmarkClient measures the inspecting verbs through runtime/local at
// 10, 1,000 and 10,000 jobs in the workspace (fabricated, not launched): a
// page of List and Status should not grow with the workspace; a page with
// counts of the whole workspace (Count) does. (Logs is measured through
// the CLI by bench/run.sh.)
func BenchmarkClient(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			c, ids := benchJobs(b, nil, n)
			newest := ids[len(ids)-1]
			b.Run("List-limit-20", func(b *testing.B) {
				for b.Loop() {
					p, err := c.List(ctx, bgjob.ListOptions{Limit: 20})
					if err != nil || len(p.Jobs) != min(n, 20) {
						b.Fatalf("List: %d jobs, %v", len(p.Jobs), err)
					}
				}
			})
			// MCP's job_list: the page and counts over the whole
			// workspace, which read every job's files (grows with n).
			b.Run("List-limit-20-counts", func(b *testing.B) {
				for b.Loop() {
					seen := 0
					p, err := c.List(ctx, bgjob.ListOptions{Limit: 20, SkipRunningCount: true, Count: func(jobdir.Job) { seen++ }})
					if err != nil || len(p.Jobs) != min(n, 20) || seen != n {
						b.Fatalf("List: %d jobs, %d counted, %v", len(p.Jobs), seen, err)
					}
				}
			})
			b.Run("Status-id", func(b *testing.B) {
				for b.Loop() {
					if js, err := c.Status(ctx, newest); err != nil || len(js) != 1 {
						b.Fatalf("Status: %v", err)
					}
				}
			})
			b.Run("Status-name-newest", func(b *testing.B) {
				for b.Loop() {
					if js, err := c.Status(ctx, fixture.Name(n-1)); err != nil || len(js) != 1 {
						b.Fatalf("Status: %v", err)
					}
				}
			})
		})
	}
}

// BenchmarkRunLocal measures starting a job through runtime/local, the
// library's share of `bgjob run` (no process start of bgjob itself).
func BenchmarkRunLocal(b *testing.B) {
	c, _ := benchJobs(b, nil, 1)
	benchRun(b, c)
}

func benchRun(b *testing.B, c *bgjob.Client) {
	ctx := context.Background()
	var ids []string
	for b.Loop() {
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	// Let the wrappers record their status before the directory goes.
	b.StopTimer()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := c.Wait(ctx, ids, bgjob.WaitOptions{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSSHWarm measures the verbs over one reused SSH connection to a
// loopback OpenSSH sshd (what an agent embedding the library pays per
// call), against a bare Exec of "true" on the same connection.
func BenchmarkSSHWarm(b *testing.B) {
	b.Setenv("SSH_AUTH_SOCK", "")
	srv := sshtest.Start(b)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "bench"); err != nil {
		b.Fatal(err)
	}
	if err := srv.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt, err := sshrt.Dial(ctx, "bench", sshrt.Options{ConfigFile: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	c, ids := benchJobs(b, rt, 10)
	newest := ids[len(ids)-1]
	b.Run("Exec-true", func(b *testing.B) {
		for b.Loop() {
			if err := rt.Exec(ctx, "true", nil, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Status", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Status(ctx, newest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("List-limit-20", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.List(ctx, bgjob.ListOptions{Limit: 20}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Run", func(b *testing.B) { benchRun(b, c) })
}

// BenchmarkListAgent measures MCP's job_list in a running server: a page
// of 20 with its ports found, and counts over the whole workspace (each
// running job's processes counted), through one long-lived client, at 176
// ended jobs (fabricated) and one running job that listens on a port.
func BenchmarkListAgent(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 is not installed")
	}
	ctx := context.Background()
	c, _ := benchJobs(b, nil, 176)
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{listener(py, "0")}, AutoPort: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop(ctx, nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}) })
	if _, _, err := c.WaitPort(ctx, j.ID, j.Port, bgjob.WaitPortOptions{Timeout: 10 * time.Second}); err != nil {
		b.Fatal(err)
	}
	// As in a server that has run a while: the ended jobs' leftovers
	// recorded (two looks), and their directories older than the
	// runtime's settling time, so that their records are kept.
	for range 2 {
		if _, err := c.List(ctx, bgjob.ListOptions{Limit: 0}); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(2500 * time.Millisecond)
	for b.Loop() {
		seen := 0
		p, err := c.List(ctx, bgjob.ListOptions{Limit: 20, Ports: true, Count: func(jobdir.Job) { seen++ }})
		if err != nil || len(p.Jobs) != 20 || seen != 177 || len(p.Jobs[0].Ports) != 1 {
			b.Fatalf("List: %d jobs, %d counted, %v", len(p.Jobs), seen, err)
		}
	}
}
