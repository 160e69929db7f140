package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// Every job a server starts records the server as its owner, with keep
// when the job outlives it.
func TestStartRecordsOwner(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	keeper := serve(t, mcp.Options{Root: root, KeepJobs: true})
	var owned, kept, keptByServer job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &owned)
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0, "keep": true}, &kept)
	call(t, keeper, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &keptByServer)
	c, err := bgjob.NewClient(localRuntime(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(context.Background(), owned.ID, kept.ID, keptByServer.ID)
	if err != nil {
		t.Fatal(err)
	}
	self := bgjob.SelfOwner(jobdir.OwnerMCP)
	for i, j := range jobs {
		want := self
		want.Keep = i > 0
		if j.Owner == nil || *j.Owner != want {
			t.Errorf("job %d: owner %+v, want %+v", i, j.Owner, want)
		}
	}
	if self.PID != os.Getpid() || self.ProcStart == "" || self.BootID == "" {
		t.Errorf("SelfOwner() = %+v", self)
	}
}

// ownerProcess returns the identity of a real process as an owner: one
// that lives until the test ends, or (dead) one that has exited.
func ownerProcess(t *testing.T, dead bool) *jobdir.Owner {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := bgjob.SelfOwner(jobdir.OwnerMCP)
	o.PID = cmd.Process.Pid
	start, err := jobdirtest.ProcStart(o.PID)
	if err != nil {
		t.Fatal(err)
	}
	o.ProcStart = start
	if dead {
		cmd.Process.Kill()
		cmd.Wait()
	} else {
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	return &o
}

// connectNoReap connects a client to a server that never shuts down, as
// one killed with SIGKILL: its jobs stay behind it.
func connectNoReap(t *testing.T, o mcp.Options) *sdk.ClientSession {
	t.Helper()
	srv, err := mcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// A new server stops, in the background, the jobs of its default host
// whose owning server is provably gone, and no other: not a job of a live
// server, not one started with keep, not one started outside MCP.
func TestNewServerStopsOrphans(t *testing.T) {
	t.Run("local", func(t *testing.T) { testStopsOrphans(t, mcp.Options{}, localRuntime()) })
	t.Run("ssh", func(t *testing.T) {
		_, cfg, dial, _ := sshHost(t)
		rt, err := sshrt.Dial(context.Background(), "bgjob-test", sshrt.Options{ConfigFile: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		testStopsOrphans(t, mcp.Options{Host: "bgjob-test", Dial: dial}, rt)
	})
}

func testStopsOrphans(t *testing.T, o mcp.Options, rt bgjob.Runtime) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	o.Root = root
	dead, alive := ownerProcess(t, true), ownerProcess(t, false)
	start := func(owner *jobdir.Owner, args map[string]any) string {
		so := o
		so.Owner = owner
		var j job
		args["command"], args["wait_sec"] = "sleep 600", 0
		call(t, connectNoReap(t, so), "job_start", args, &j)
		return j.ID
	}
	orphan := start(dead, map[string]any{})
	kept := start(dead, map[string]any{"keep": true})
	live := start(alive, map[string]any{})
	elsewhere := *dead
	elsewhere.Hostname += "-elsewhere"
	remote := start(&elsewhere, map[string]any{})
	c, err := bgjob.NewClient(rt, root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cli, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Status(ctx, orphan, kept, live, remote, cli.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Status != jobdir.StatusRunning {
			t.Fatalf("before a new server: job %s is %s", j.ID, j.Status)
		}
	}

	// The new server answers at once; the orphan is stopped meanwhile.
	var list struct{ Jobs []job }
	call(t, serve(t, o), "job_list", map[string]any{}, &list)
	if len(list.Jobs) != 5 {
		t.Errorf("job_list: %d jobs, want 5", len(list.Jobs))
	}
	eventually(t, time.Minute, func() bool {
		j, err := c.Status(ctx, orphan)
		return err == nil && j[0].Status == jobdir.StatusKilled
	})
	// One Stop call stops every orphan the pass found: the others stay.
	jobs, err = c.Status(ctx, kept, live, remote, cli.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Status != jobdir.StatusRunning {
			t.Errorf("job %s (owner %+v) is %s, want running", j.ID, j.Owner, j.Status)
		}
	}
}

func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
	}
}

// job_list says which jobs the calling session started (mine) and which
// outlive their session (keep): another live server's job is not mine.
func TestListMine(t *testing.T) {
	root := t.TempDir()
	other := ownerProcess(t, false)
	var theirs, kept job
	call(t, connectNoReap(t, mcp.Options{Root: root, Owner: other}), "job_start",
		map[string]any{"command": "sleep 600", "wait_sec": 0}, &theirs)
	cs := serve(t, mcp.Options{Root: root})
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0, "keep": true}, &kept)
	var mine job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &mine)
	var list struct {
		Jobs []struct {
			ID   string `json:"id"`
			Mine bool   `json:"mine"`
			Keep bool   `json:"keep"`
		} `json:"jobs"`
	}
	call(t, cs, "job_list", map[string]any{}, &list)
	want := map[string][2]bool{theirs.ID: {false, false}, kept.ID: {true, true}, mine.ID: {true, false}}
	if len(list.Jobs) != len(want) {
		t.Fatalf("job_list: %+v, want 3 jobs", list.Jobs)
	}
	for _, j := range list.Jobs {
		if w := want[j.ID]; j.Mine != w[0] || j.Keep != w[1] {
			t.Errorf("job %s: mine %v keep %v, want %v %v", j.ID, j.Mine, j.Keep, w[0], w[1])
		}
	}
}
