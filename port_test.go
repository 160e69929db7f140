package bgjob_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// python3 is the listener these tests start: a real server on a real
// port, as agents' dev servers are.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	return p
}

// listener is a job command that listens on $PORT (IPv4, all addresses)
// after delay, until stopped.
func listener(py, delay string) string {
	return "sleep " + delay + "; exec " + py + ` -c 'import os, socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", int(os.environ["PORT"]))); s.listen(); time.sleep(600)'`
}

// TestAutoPortListens: a job given a port (AutoPort) gets it in PORT and
// meta.json, and once it listens there WaitPort returns it, Status with
// Ports reports it, and a run that asks for the same port is refused,
// naming the job; a job that ends first and a timeout are WaitPort's other
// outcomes.
func TestAutoPortListens(t *testing.T) {
	py := python3(t)
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{listener(py, "0.3")}, AutoPort: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx, []string{j.ID}, bgjob.RemoveOptions{Force: true})
	if j.Port == 0 || !strings.Contains(strings.Join(j.Env, " "), "PORT") {
		t.Fatalf("job port %d, env %v; want a port, PORT", j.Port, j.Env)
	}
	got, p, err := c.WaitPort(ctx, j.ID, j.Port, bgjob.WaitPortOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := jobdir.Port{Port: j.Port, Proto: "tcp", Address: "0.0.0.0"}
	if p != want || len(got.Ports) != 1 || got.Ports[0] != want {
		t.Errorf("WaitPort: %v, job's ports %v; want %v", p, got.Ports, want)
	}
	jobs, err := c.StatusWith(ctx, bgjob.StatusOptions{Ports: true}, j.ID)
	if err != nil || len(jobs) != 1 || len(jobs[0].Ports) != 1 || jobs[0].Ports[0] != want {
		t.Errorf("StatusWith Ports: %+v, %v; want the port %v", jobs, err, want)
	}
	if jobs, err := c.Status(ctx, j.ID); err != nil || len(jobs[0].Ports) != 0 {
		t.Errorf("Status without Ports: ports %v, %v; want none looked for", jobs[0].Ports, err)
	}
	_, err = c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: j.Port})
	if !errors.Is(err, bgjob.ErrPortTaken) || !strings.Contains(err.Error(), "job "+j.ID) {
		t.Errorf("a run asking for the job's port: %v; want ErrPortTaken naming job %s", err, j.ID)
	}

	ended, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 0.2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx, []string{ended.ID}, bgjob.RemoveOptions{Force: true})
	e, _, err := c.WaitPort(ctx, ended.ID, bgjob.AnyPort, bgjob.WaitPortOptions{Timeout: 10 * time.Second})
	if !errors.Is(err, bgjob.ErrNoMatch) || e.ExitCode == nil || *e.ExitCode != 3 {
		t.Errorf("WaitPort of a job that ends first: %v, exit %v; want ErrNoMatch, 3", err, e.ExitCode)
	}
	if _, _, err := c.WaitPort(ctx, j.ID, j.Port+1, bgjob.WaitPortOptions{Timeout: 500 * time.Millisecond}); !errors.Is(err, bgjob.ErrTimeout) {
		t.Errorf("WaitPort of a port never listened on: %v; want ErrTimeout", err)
	}
}

// TestPortTakenByOutsider: a port an outside process listens on is
// refused at once, the process named, and no job is made.
func TestPortTakenByOutsider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port})
	if !errors.Is(err, bgjob.ErrPortTaken) || !strings.Contains(err.Error(), "process ") || !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Errorf("run --port %d held by this test: %v; want ErrPortTaken naming the process", port, err)
	}
	if page, err := c.List(ctx, bgjob.ListOptions{}); err != nil || len(page.Jobs) != 0 {
		t.Errorf("jobs after the refusal: %v, %v; want none", page.Jobs, err)
	}
}

// TestAutoPortsNeverCollide: 20 runs at once with AutoPort, each from
// its own client as 20 agents' would be, get 20 different ports.
func TestAutoPortsNeverCollide(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	const n = 20
	ports := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := bgjob.NewClient(local.New(), root, "")
			if err != nil {
				errs[i] = err
				return
			}
			j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 30"}, AutoPort: true})
			ports[i], errs[i] = j.Port, err
		}()
	}
	wg.Wait()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, nil, bgjob.StopOptions{All: true})
	seen := map[int]int{}
	for i, p := range ports {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if p < 20000 || p > 29999 {
			t.Errorf("run %d: port %d, want one from 20000 to 29999", i, p)
		}
		if j, dup := seen[p]; dup {
			t.Errorf("runs %d and %d both got port %d", j, i, p)
		}
		seen[p] = i
	}
}

// TestPortReservations: a port stays taken while the job that took it
// runs, and while a launch that took it has not made its job yet (a
// reservation of a minute); once the job has ended it is free again.
func TestPortReservations(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Before the directory goes: the last runs' wrappers may still write
	// their ends (a CI run's cleanup met a job directory not yet empty).
	t.Cleanup(func() { c.Stop(ctx, nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 30"}, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port}); !errors.Is(err, bgjob.ErrPortTaken) || !strings.Contains(err.Error(), "job "+j.ID) {
		t.Errorf("a run asking for the port a running job took: %v; want ErrPortTaken naming job %s", err, j.ID)
	}
	if _, err := c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	next, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port})
	if err != nil || next.Port != port {
		t.Errorf("a run asking for the port of a job stopped: port %d, %v; want %d", next.Port, err, port)
	}
	// A launch under way: the reservation names a job not made yet.
	pending := jobdir.NewID(time.Now())
	res := filepath.Join(root, ".ports", strconv.Itoa(port+1))
	if err := os.WriteFile(res, []byte("default/"+pending+" "+strconv.FormatInt(time.Now().Unix(), 10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port + 1}); !errors.Is(err, bgjob.ErrPortTaken) {
		t.Errorf("a run asking for a port a launch under way took: %v; want ErrPortTaken", err)
	}
	// The same, two minutes old: that launch made no job.
	if err := os.WriteFile(res, []byte("default/"+pending+" "+strconv.FormatInt(time.Now().Add(-2*time.Minute).Unix(), 10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port + 1}); err != nil {
		t.Errorf("a run asking for a port a launch took two minutes ago: %v", err)
	}
}

// TestPortReservationsCleaned: a reservation that holds its port no
// longer never blocks a run: rm and prune remove the reservation of each
// job they remove (and not another job's of the same port since), a
// refused launch lets go of its own, and an ended job's is free at once;
// a launch under way (its directory made, no meta.json yet) holds its
// port however old its reservation.
func TestPortReservationsCleaned(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer c.Stop(ctx, nil, bgjob.StopOptions{All: true})
	base := freePort(t)
	res := func(port int) string { return filepath.Join(root, ".ports", strconv.Itoa(port)) }
	reservedBy := func(port int) string {
		b, err := os.ReadFile(res(port))
		if err != nil {
			return ""
		}
		who, _, _ := strings.Cut(string(b), " ")
		return strings.TrimPrefix(who, "default/")
	}
	ended := func(port int) jobdir.Job {
		t.Helper()
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: port})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if got := reservedBy(port); got != j.ID {
			t.Fatalf("the reservation of port %d names %q, want the job %s", port, got, j.ID)
		}
		return j
	}

	// rm: the job's reservation goes with it, and the port is free.
	j := ended(base)
	if _, err := c.Remove(ctx, []string{j.ID}, bgjob.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := reservedBy(base); got != "" {
		t.Errorf("after rm the reservation of port %d names %q, want none", base, got)
	}
	next, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: base})
	if err != nil {
		t.Errorf("a run asking for the port of a job removed: %v", err)
	}

	// An ended job's port is free; rm of the ended job then leaves the
	// reservation of the job that took its port since.
	if _, err := c.Wait(ctx, []string{next.ID}, bgjob.WaitOptions{Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	taker, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 30"}, Port: base})
	if err != nil {
		t.Fatalf("a run asking for the port of an ended job: %v", err)
	}
	if _, err := c.Remove(ctx, []string{next.ID}, bgjob.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := reservedBy(base); got != taker.ID {
		t.Errorf("after rm of the job that held port %d before, its reservation names %q, want the job %s that took it since", base, got, taker.ID)
	}

	// prune: the same.
	ended(base + 1)
	if _, err := c.Prune(ctx, bgjob.PruneOptions{Keep: 0, All: true}); err != nil {
		t.Fatal(err)
	}
	if got := reservedBy(base + 1); got != "" {
		t.Errorf("after prune the reservation of port %d names %q, want none", base+1, got)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: base + 1}); err != nil {
		t.Errorf("a run asking for the port of a job pruned: %v", err)
	}

	// A launch refused after its port was taken lets go of it.
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: base + 2, Cwd: filepath.Join(root, "nowhere")}); err == nil {
		t.Fatal("a run in a working directory that does not exist was not refused")
	}
	if got := reservedBy(base + 2); got != "" {
		t.Errorf("after a refused launch the reservation of port %d names %q, want none", base+2, got)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: base + 2}); err != nil {
		t.Errorf("a run asking for the port of a refused launch: %v", err)
	}

	// A launch under way: its directory made, its meta.json not yet
	// written, its reservation two minutes old.
	pending := jobdir.NewID(time.Now())
	if err := os.Mkdir(filepath.Join(root, "default", pending), 0o700); err != nil {
		t.Fatal(err)
	}
	old := strconv.FormatInt(time.Now().Add(-2*time.Minute).Unix(), 10)
	if err := os.WriteFile(res(base+3), []byte("default/"+pending+" "+old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, Port: base + 3}); !errors.Is(err, bgjob.ErrPortTaken) {
		t.Errorf("a run asking for the port of a launch under way: %v; want ErrPortTaken", err)
	}
}

// freePort returns a TCP port nothing listens on, with the three after
// it free too.
func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		free := port+3 <= 65535
		for p := port + 1; free && p <= port+3; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if free = err == nil; free {
				l.Close()
			}
		}
		if free {
			return port
		}
	}
	t.Fatal("no four free TCP ports in a row")
	return 0
}
