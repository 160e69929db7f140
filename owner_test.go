package bgjob_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"

	"github.com/bgjob/bgjob/internal/testneed"
)

// process starts a real process and returns its identity as an owner; the
// process is killed when the test ends.
func process(t *testing.T) (jobdir.Owner, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	o := bgjob.SelfOwner(jobdir.OwnerMCP)
	o.PID = cmd.Process.Pid
	start, err := jobdirtest.ProcStart(o.PID)
	if err != nil {
		t.Fatal(err)
	}
	o.ProcStart = start
	return o, cmd
}

func TestOwnerGone(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testneed.Missing(t, "/proc")
	}
	self := bgjob.SelfOwner(jobdir.OwnerMCP)
	if self.PID != os.Getpid() || self.ProcStart == "" || self.BootID == "" || self.Hostname == "" {
		t.Fatalf("SelfOwner() = %+v", self)
	}
	alive, _ := process(t)
	dead, cmd := process(t)
	cmd.Process.Kill()
	cmd.Wait()
	zombie, zcmd := process(t)
	zcmd.Process.Kill()
	// Not waited for: a zombie until the cleanup reaps it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(zombie.PID) + "/stat")
		if s := string(b); strings.Contains(s, ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie: %q", zombie.PID, b)
		}
	}
	tests := []struct {
		name  string
		owner func() jobdir.Owner
		gone  bool
	}{
		{"this process", func() jobdir.Owner { return self }, false},
		{"a live process", func() jobdir.Owner { return alive }, false},
		{"a process that has exited", func() jobdir.Owner { return dead }, true},
		{"a zombie", func() jobdir.Owner { return zombie }, true},
		{"the pid of a process started later", func() jobdir.Owner { o := alive; o.ProcStart = "1"; return o }, true},
		{"a reboot", func() jobdir.Owner { o := alive; o.BootID = "another-boot"; return o }, true},
		{"another machine's pid that is gone here", func() jobdir.Owner { o := dead; o.Hostname += "-elsewhere"; return o }, false},
		{"another machine id", func() jobdir.Owner { o := dead; o.MachineID = "0000"; return o }, false},
		{"another machine that rebooted", func() jobdir.Owner { o := dead; o.Hostname += "-x"; o.BootID = "b"; return o }, false},
		{"another pid namespace", func() jobdir.Owner { o := dead; o.PIDNamespace = "pid:[1]"; return o }, false},
		{"no start time known", func() jobdir.Owner { o := dead; o.ProcStart = ""; return o }, false},
		{"no boot id known", func() jobdir.Owner { o := dead; o.BootID = ""; return o }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if gone, why := bgjob.OwnerGone(tt.owner()); gone != tt.gone {
				t.Errorf("OwnerGone(%+v) = %v (%s), want %v", tt.owner(), gone, why, tt.gone)
			}
		})
	}
}

// StopOrphans stops a running job whose owner is gone, and no other.
func TestStopOrphans(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testneed.Missing(t, "/proc")
	}
	ctx := context.Background()
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	alive, _ := process(t)
	dead, cmd := process(t)
	cmd.Process.Kill()
	cmd.Wait()
	kept := dead
	kept.Keep = true
	elsewhere := dead
	elsewhere.Hostname += "-elsewhere"
	run := func(name string, o *jobdir.Owner) jobdir.Job {
		j, err := c.Run(ctx, bgjob.Spec{Name: name, Argv: []string{"sleep 600"}, Owner: o})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-j.PGID, syscall.SIGKILL) })
		return j
	}
	orphan := run("orphan", &dead)
	run("cli", nil)
	run("alive", &alive)
	run("kept", &kept)
	run("elsewhere", &elsewhere)
	ended, err := c.Run(ctx, bgjob.Spec{Name: "ended", Argv: []string{"true"}, Owner: &dead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{ended.ID}, bgjob.WaitOptions{}); err != nil {
		t.Fatal(err)
	}

	dry, err := c.StopOrphans(ctx, bgjob.OrphanOptions{DryRun: true})
	if err != nil || len(dry) != 1 || dry[0].ID != orphan.ID || dry[0].Status != jobdir.StatusRunning {
		t.Fatalf("StopOrphans(DryRun) = %+v, %v; want the orphan, running", dry, err)
	}
	stopped, err := c.StopOrphans(ctx, bgjob.OrphanOptions{})
	if err != nil || len(stopped) != 1 || stopped[0].ID != orphan.ID || stopped[0].Status != jobdir.StatusKilled {
		t.Fatalf("StopOrphans() = %+v, %v; want the orphan, killed", stopped, err)
	}
	if stopped[0].Owner == nil || *stopped[0].Owner != dead {
		t.Errorf("owner read back %+v, want %+v", stopped[0].Owner, dead)
	}
	page, err := c.List(ctx, bgjob.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range page.Jobs {
		want := jobdir.StatusRunning
		switch j.Name {
		case "orphan":
			want = jobdir.StatusKilled
		case "ended":
			want = jobdir.StatusExited
		}
		if j.Status != want {
			t.Errorf("job %s is %s, want %s", j.Name, j.Status, want)
		}
	}
	if again, err := c.StopOrphans(ctx, bgjob.OrphanOptions{}); err != nil || len(again) != 0 {
		t.Errorf("StopOrphans() again = %+v, %v; want nothing", again, err)
	}
}
