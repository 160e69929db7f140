package bgjob_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// counted runs scripts alone (scriptOnly), as over SSH, and counts them:
// every script, and the watches of events (watch.sh, the one script that
// sets bg_wlive). With drop set, the first watch ends with an error a
// moment after it began, as a session of a dropped connection does.
type counted struct {
	scriptOnly
	scripts, watches atomic.Int64
	drop             bool
}

var errDropped = errors.New("connection lost")

func (r *counted) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	r.scripts.Add(1)
	if !strings.Contains(script, "\nbg_wlive=") {
		return r.scriptOnly.Exec(ctx, script, stdin, stdout)
	}
	if n := r.watches.Add(1); n == 1 && r.drop {
		ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		r.scriptOnly.Exec(ctx, script, stdin, stdout)
		return errDropped
	}
	return r.scriptOnly.Exec(ctx, script, stdin, stdout)
}

// follow runs a follow of the events of c's workspace until the test
// ends, and returns a function that reports the kinds of the events of
// job id so far.
func follow(t *testing.T, c *bgjob.Client) func(id string) []string {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu  sync.Mutex
		got = map[string][]string{}
	)
	done := make(chan error, 1)
	go func() {
		done <- c.Events(ctx, nil, bgjob.EventOptions{Follow: true}, func(e bgjob.Event) error {
			mu.Lock()
			got[e.ID] = append(got[e.ID], e.Event)
			mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the follow ended with %v", err)
		}
	})
	return func(id string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got[id]...)
	}
}

// TestEventsFollowHostWatch: through a runtime that is not a Watcher (as
// over SSH), a follow of events holds one watch script on the host for
// its whole length and looks only when it reports: an idle workspace
// costs no script (where the follow polled, one every 2 s), and a job's
// start and end each bring their events.
func TestEventsFollowHostWatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rt := &counted{scriptOnly: scriptOnly{local.New()}}
	c, err := bgjob.NewClient(rt, root, "")
	if err != nil {
		t.Fatal(err)
	}
	// Jobs are run through a client of their own, not counted.
	runner, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := runner.Run(context.Background(), bgjob.Spec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Wait(context.Background(), []string{first.ID}, bgjob.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	events := follow(t, c)
	if !eventually(10*time.Second, func() bool { return len(events(first.ID)) == 2 }) {
		t.Fatalf("events of the first job: %v", events(first.ID))
	}
	// The watch, the first look, and the look the watch's first report
	// brought; then nothing.
	if !eventually(5*time.Second, func() bool { return rt.scripts.Load() == 3 }) {
		t.Errorf("%d scripts to begin a follow, want the watch and two looks", rt.scripts.Load())
	}
	idle := rt.scripts.Load()
	time.Sleep(5 * time.Second)
	if n := rt.scripts.Load() - idle; n != 0 {
		t.Errorf("%d scripts in 5 s of an idle follow, want none", n)
	}
	gate := t.TempDir() + "/go"
	j, err := runner.Run(context.Background(), bgjob.Spec{Argv: []string{"while [ ! -e " + gate + " ]; do sleep 0.05; done"}})
	if err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return len(events(j.ID)) == 1 }) {
		t.Fatalf("events of a job started: %v", events(j.ID))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return len(events(j.ID)) == 2 }) {
		t.Fatalf("events of a job ended: %v", events(j.ID))
	}
	if got := events(j.ID); got[0] != bgjob.EventStarted || got[1] != bgjob.EventEnded {
		t.Errorf("events %v, want started, ended", got)
	}
	if n := rt.watches.Load(); n != 1 {
		t.Errorf("%d watch scripts, want one for the whole follow", n)
	}
}

// TestEventsFollowHostWatchDropped: a watch whose session ends (a dropped
// connection) is started again, and the follow goes on: a job run after
// the drop is told.
func TestEventsFollowHostWatchDropped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rt := &counted{scriptOnly: scriptOnly{local.New()}, drop: true}
	c, err := bgjob.NewClient(rt, root, "")
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	events := follow(t, c)
	if !eventually(15*time.Second, func() bool { return rt.watches.Load() == 2 }) {
		t.Fatalf("%d watches started, want the dropped one started again", rt.watches.Load())
	}
	j, err := runner.Run(context.Background(), bgjob.Spec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return len(events(j.ID)) == 2 }) {
		t.Fatalf("events of a job run after the drop: %v", events(j.ID))
	}
}
