package bgjob_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
	"github.com/bgjob/bgjob/termtext"
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

// Wait until a server says it is ready, without a sleep loop, then read
// only what it printed, at most 64 KiB.
func ExampleClient_WaitFor() {
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
	job, err := c.Run(ctx, bgjob.Spec{Argv: []string{"echo starting; sleep 0.2; echo 'listening on :8000' >&2; sleep 60"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop(ctx, []string{job.ID}, bgjob.StopOptions{})
	_, m, err := c.WaitFor(ctx, job.ID, "listening on :[0-9]+", bgjob.WaitForOptions{Timeout: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %d-%d %q\n", m.Stream, m.Offset, m.Next, m.Line)
	res, err := c.Logs(ctx, job.ID, bgjob.LogOptions{Cursor: &bgjob.Cursor{}, MaxBytes: 64 << 10}, os.Stdout, os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Job.Status, len(res.Ranges))
	// Output:
	// stderr 0-19 "listening on :8000\n"
	// starting
	// listening on :8000
	// running 2
}

// Hand a job's output on after each read, as an MCP server does with its
// results: Hold keeps the cursor where it was, so a read that never
// arrives is read again; Delivered says one arrived, and the next read
// through the Cursor moves the cursor over it before it reads what is new.
func ExampleCursor() {
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
	job, err := c.Run(ctx, bgjob.Spec{Argv: []string{`echo one; read line; echo "$line"`}, Stdin: true})
	if err != nil {
		log.Fatal(err)
	}
	if _, _, err := c.WaitFor(ctx, job.ID, "one", bgjob.WaitForOptions{Timeout: 30 * time.Second}); err != nil {
		log.Fatal(err)
	}
	cur := &bgjob.Cursor{Reader: "agent", Hold: true}
	read := func() bgjob.LogResult {
		var out bytes.Buffer
		res, err := c.Logs(ctx, job.ID, bgjob.LogOptions{Cursor: cur}, &out, &out)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q\n", out.String())
		return res
	}
	res := read()
	read() // not delivered: the same bytes again
	cur.Delivered(res)
	if _, err := c.Send(ctx, job.ID, strings.NewReader("two\n"), bgjob.SendOptions{}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{job.ID}, bgjob.WaitOptions{}); err != nil {
		log.Fatal(err)
	}
	read()
	// Output:
	// "one\n"
	// "one\n"
	// "two\n"
}

// Restart a named job: Replace stops the job of that name (TERM, KILL
// after Grace) and waits until its processes are gone before the new one
// starts, so a port it held is free. NameHeld hears of each job it
// replaced; without Replace, of a job of the name left running.
func ExampleSpec_replace() {
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
	spec := bgjob.Spec{Name: "server", Argv: []string{"sleep", "60"}, Grace: new(200 * time.Millisecond)}
	spec.NameHeld = func(j jobdir.Job, replaced bool) {
		fmt.Println("replaced:", replaced, "status:", j.Status)
	}
	if _, err := c.Run(ctx, spec); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(ctx, spec); err != nil { // runs beside the first
		log.Fatal(err)
	}
	spec.Replace = true
	if _, err := c.Run(ctx, spec); err != nil { // stops both first
		log.Fatal(err)
	}
	if _, err := c.Stop(ctx, nil, bgjob.StopOptions{All: true, Grace: new(time.Duration(0))}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// replaced: false status: running
	// replaced: true status: killed
	// replaced: true status: killed
}

// Run a program that wants a terminal, answer its prompt and read what it
// wrote as text: the terminal's stream ends lines in "\r\n" and carries the
// program's colours, which termtext.Strip removes.
func ExampleSpec_pty() {
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
	job, err := c.Run(ctx, bgjob.Spec{PTY: true, PTYCols: 100, PTYRows: 40,
		Argv: []string{`test -t 0 && stty size; printf 'name? '; read n; printf '\033[1mhello, %s\033[0m\n' "$n"`}})
	if err != nil {
		log.Fatal(err)
	}
	// The terminal echoes what is typed when it arrives, as a real one
	// does: type once the prompt is there.
	if _, _, err := c.WaitFor(ctx, job.ID, `^name\? $`, bgjob.WaitForOptions{Timeout: time.Minute}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Send(ctx, job.ID, strings.NewReader("bob\n"), bgjob.SendOptions{}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{job.ID}, bgjob.WaitOptions{}); err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := c.Logs(ctx, job.ID, bgjob.LogOptions{Stdout: true}, &out, io.Discard); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", out.String())
	fmt.Print(string(termtext.Strip(out.Bytes())))
	// Output:
	// "40 100\r\nname? bob\r\n\x1b[1mhello, bob\x1b[0m\r\n"
	// 40 100
	// name? bob
	// hello, bob
}

// Start a server and move on once it is ready: a line that matches, or
// its end first (a port in use), or the timeout, each with the job as it
// then is. The time it became ready stays in the job (ReadyAt).
func ExampleClient_Ready() {
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
	for _, cmd := range []string{
		"echo starting; sleep 0.2; echo 'listening on :8000'; sleep 60",
		"echo 'port 8000 in use' >&2; exit 98",
	} {
		job, err := c.Run(ctx, bgjob.Spec{Argv: []string{cmd}})
		if err != nil {
			log.Fatal(err)
		}
		r, err := c.Ready(ctx, job.ID, "listening on :[0-9]+", bgjob.ReadyOptions{Timeout: 30 * time.Second})
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case r.Ready:
			fmt.Printf("ready: %q, recorded: %v\n", r.Match.Line, r.Job.ReadyAt != nil)
		case r.TimedOut:
			fmt.Println("not ready in time; it goes on")
		default:
			fmt.Println("ended first:", r.Job.Status, *r.Job.ExitCode)
		}
		c.Stop(ctx, []string{job.ID}, bgjob.StopOptions{})
	}
	// Output:
	// ready: "listening on :8000\n", recorded: true
	// ended first: exited 98
}
