package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// A client that goes away without closing its session cleanly still ends
// it: the server stops the jobs it started and exits. Its stdout closed, a
// write to it killed the server with SIGPIPE before it stopped anything;
// a client that stopped reading left the server blocked in a write, deaf
// to TERM and to the end of its stdin.
func TestMCPClientGone(t *testing.T) {
	t.Parallel()
	for _, way := range []string{"stdout closed", "not reading, TERM", "not reading, stdin closed"} {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			t.Cleanup(func() { killAll(root) })
			cmd, in, outp, stderr := startRawMCP(t, "--root", root)
			exited := make(chan error, 1)
			// Lines are read as long as the test takes them: a test that
			// stops taking them stops the reading (after a few).
			out := make(chan string, 4)
			go func() {
				defer close(out)
				br := bufio.NewReader(outp)
				for {
					s, err := br.ReadString('\n')
					if s != "" {
						out <- s
					}
					if err != nil {
						return
					}
				}
			}()
			send := func(line string) error {
				_, err := io.WriteString(in, line+"\n")
				return err
			}
			call := func(id int, method, params string) json.RawMessage {
				t.Helper()
				if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)); err != nil {
					t.Fatal(err)
				}
				for {
					select {
					case s := <-out:
						var m map[string]json.RawMessage
						if json.Unmarshal([]byte(s), &m) == nil && string(m["id"]) == fmt.Sprint(id) {
							return m["result"]
						}
					case <-time.After(2 * time.Minute):
						t.Fatalf("no answer to %s; stderr: %s", method, stderr)
					}
				}
			}
			call(0, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e-gone","version":"1"}}`)
			if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
				t.Fatal(err)
			}
			var started struct {
				StructuredContent toolJob `json:"structuredContent"`
			}
			if err := json.Unmarshal(call(1, "tools/call", `{"name":"job_start","arguments":{"command":"head -c 3000000 /dev/zero | tr '\\0' a; exec sleep 600","wait_sec":0}}`), &started); err != nil {
				t.Fatal(err)
			}
			id := started.StructuredContent.ID
			go func() { exited <- cmd.Wait() }()
			if way == "stdout closed" {
				outp.Close()
				send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job_list","arguments":{}}}`)
			} else {
				// Reads of a megabyte and more that nobody takes: the
				// server's writes block once the pipe is full.
				for i := range 40 {
					send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"job_output","arguments":{"id":%q,"since":"start","stream":"stdout"}}}`, 10+i, id))
				}
				time.Sleep(time.Second)
				if strings.HasSuffix(way, "TERM") {
					cmd.Process.Signal(syscall.SIGTERM)
				} else {
					in.Close()
				}
			}
			select {
			case <-exited:
			case <-time.After(time.Minute):
				t.Fatalf("bgjob mcp still runs a minute after its client went (%s); stderr: %s", way, stderr)
			}
			code, outs, errs := bgjob(context.Background(), "--root", root, "status", "--json", id)
			var jobs []jobdir.Job
			if code != 0 || json.Unmarshal([]byte(outs), &jobs) != nil || len(jobs) != 1 {
				t.Fatalf("status: exit %d: %s %s", code, outs, errs)
			}
			if jobs[0].Status != jobdir.StatusKilled {
				t.Errorf("the server's job after its client went (%s): %s, want killed; stderr: %s", way, jobs[0].Status, stderr)
			}
		})
	}
}

// A job_start still launching when the session ends (its input, a TERM,
// a HUP) is stopped with the session's jobs: the server waits for the
// launch, then stops it. It once stopped what it had recorded while the
// launch went on, and the job ran on after the server had exited (4 of 20
// such sessions).
func TestMCPStartAtTheEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	const sessions = 30
	var ways []string
	for i := range sessions {
		cmd, in, out, stderr := startRawMCP(t, "--root", root)
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e-end","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job_start","arguments":{"command":"sleep 204","wait_sec":0}}}`+"\n")
		// The server has its signal handlers once it answers initialize:
		// a signal before then is the default's (death), or lost where
		// the test runs with it ignored (nohup).
		br := bufio.NewReader(out)
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("session %d: no answer to initialize: %v; stderr: %s", i, err, stderr)
		}
		go io.Copy(io.Discard, br)
		// The session ends at a moment of the start, a different one each
		// time: the input ends, or a TERM or a HUP comes.
		time.Sleep(time.Duration(i%10) * 3 * time.Millisecond)
		switch i % 3 {
		case 0:
			in.Close()
		case 1:
			cmd.Process.Signal(syscall.SIGTERM)
		case 2:
			cmd.Process.Signal(syscall.SIGHUP)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		ways = append(ways, fmt.Sprintf("pid %d: way %d after %v", cmd.Process.Pid, i%3, time.Duration(i%10)*3*time.Millisecond))
		select {
		case err := <-exited:
			ways[len(ways)-1] += fmt.Sprintf(", %v, stderr %q", err, stderr)
		case <-time.After(time.Minute):
			// Its goroutines, to see where it waits.
			cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
			}
			t.Fatalf("session %d: bgjob mcp still runs a minute after its session ended; stderr: %s", i, stderr)
		}
	}
	code, outs, errs := bgjob(context.Background(), "--root", root, "ls", "--json", "--limit", "0")
	var list struct{ Jobs []jobdir.Job }
	if code != 0 || json.Unmarshal([]byte(outs), &list) != nil {
		t.Fatalf("ls: exit %d: %s %s", code, outs, errs)
	}
	for _, j := range list.Jobs {
		if j.Status == jobdir.StatusRunning || j.LiveProcesses > 0 {
			t.Errorf("job %s of a session that ended: %s, %d live processes; want it stopped; owner %+v; %s\n%s", j.ID, j.Status, j.LiveProcesses, j.Owner, dumpDir(j.Dir), psOf(j.ID))
		}
	}
	t.Logf("%d sessions started %d jobs", sessions, len(list.Jobs))
	if t.Failed() {
		t.Logf("the sessions:\n%s", strings.Join(ways, "\n"))
	}
}

// psOf lists the processes whose arguments or environment name the job id.
func psOf(id string) string {
	out, _ := exec.Command("sh", "-c", `for p in /proc/[0-9]*; do if grep -q -a -s "`+id+`" $p/environ $p/cmdline; then ps -o pid,ppid,pgid,sid,stat,args -p ${p#/proc/} | tail -n +2; fi; done`).CombinedOutput()
	return string(out)
}
