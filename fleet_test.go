package bgjob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// localFleet is a fleet whose "hosts" are job roots on this machine, one
// per host name; the host named "down" cannot be reached.
func localFleet(t *testing.T, hosts []string, parallel int, dials *atomic.Int32) *bgjob.Fleet {
	t.Helper()
	base := t.TempDir()
	var open, peak atomic.Int32
	t.Cleanup(func() {
		if p := int(peak.Load()); p > parallel {
			t.Errorf("%d connections open at once, want at most %d", p, parallel)
		}
	})
	dial := func(ctx context.Context, host string) (*bgjob.Client, func(), error) {
		if dials != nil {
			dials.Add(1)
		}
		if host == "down" {
			return nil, nil, errors.New("connection refused")
		}
		n := open.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		c, err := bgjob.NewClient(local.New(), filepath.Join(base, host), "")
		if err != nil {
			open.Add(-1)
			return nil, nil, err
		}
		return c, func() { open.Add(-1) }, nil
	}
	return bgjob.NewFleet(hosts, dial, parallel)
}

func TestFleetRunWaitLogs(t *testing.T) {
	t.Parallel()
	hosts := []string{"a", "b", "down", "c", "d", "e", "a"}
	var dials atomic.Int32
	f := localFleet(t, hosts, 2, &dials)
	if diff := cmp.Diff([]string{"a", "b", "down", "c", "d", "e"}, f.Hosts()); diff != "" {
		t.Fatalf("hosts (-want +got):\n%s", diff)
	}
	ctx := context.Background()

	runs := f.Run(ctx, bgjob.Spec{Argv: []string{`echo "out $0"; exit 3`}})
	if got := dials.Load(); got != 6 {
		t.Errorf("run dialled %d times, want once per host (6)", got)
	}
	id := ""
	for _, r := range runs {
		if r.Host == "down" {
			var he *bgjob.Error
			if !errors.As(r.Err, &he) || he.Host != "down" || !strings.HasPrefix(r.Err.Error(), "down: ") {
				t.Errorf("down: error %v, want an Error naming the host", r.Err)
			}
			continue
		}
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host, r.Err)
		}
		if id == "" {
			id = r.Value.ID
		}
		if r.Value.ID != id {
			t.Errorf("%s: id %s, want the same id %s on every host", r.Host, r.Value.ID, id)
		}
	}

	for _, r := range f.Wait(ctx, []string{id}, bgjob.WaitOptions{}) {
		if r.Host == "down" {
			continue
		}
		if r.Err != nil || len(r.Value) != 1 || r.Value[0].ExitCode == nil || *r.Value[0].ExitCode != 3 {
			t.Errorf("%s: wait %+v %v, want one job that exited 3", r.Host, r.Value, r.Err)
		}
	}

	var mu sync.Mutex
	outs := map[string]*bytes.Buffer{}
	res := f.Logs(ctx, id, bgjob.LogOptions{}, func(host string) (io.Writer, io.Writer) {
		mu.Lock()
		defer mu.Unlock()
		outs[host] = &bytes.Buffer{}
		return outs[host], io.Discard
	})
	for _, r := range res {
		if r.Host == "down" {
			if r.Err == nil {
				t.Errorf("down: logs succeeded")
			}
			continue
		}
		if r.Err != nil {
			t.Errorf("%s: logs: %v", r.Host, r.Err)
		}
		if got := outs[r.Host].String(); got != "out sh\n" && got != "out bash\n" {
			t.Errorf("%s: logs %q", r.Host, got)
		}
	}
}

func TestFleetRunIDTaken(t *testing.T) {
	t.Parallel()
	f := localFleet(t, []string{"a", "b"}, 4, nil)
	ctx := context.Background()
	spec := bgjob.Spec{ID: jobdir.NewID(time.Now()), Argv: []string{"true"}}
	for _, r := range f.Run(ctx, spec) {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host, r.Err)
		}
	}
	// Ended before the test's directories go: a wrapper still writing
	// its status would leave one not empty.
	for _, r := range f.Wait(ctx, []string{spec.ID}, bgjob.WaitOptions{}) {
		if r.Err != nil {
			t.Fatalf("%s: wait: %v", r.Host, r.Err)
		}
	}
	for _, r := range f.Run(ctx, spec) {
		if !errors.Is(r.Err, bgjob.ErrExists) {
			t.Errorf("%s: second run with the same id: %v, want ErrExists", r.Host, r.Err)
		}
	}
	spec.ID = "not-an-id"
	for _, r := range f.Run(ctx, spec) {
		if !errors.Is(r.Err, bgjob.ErrUsage) {
			t.Errorf("%s: run with a bad id: %v, want ErrUsage", r.Host, r.Err)
		}
	}
}

// TestFleetParallel: with 40 hosts and a parallelism of 3, no more than 3
// connections are open at once (checked in localFleet's cleanup), and
// every host answers.
func TestFleetParallel(t *testing.T) {
	t.Parallel()
	var hosts []string
	for i := range 40 {
		hosts = append(hosts, fmt.Sprintf("h%d", i))
	}
	f := localFleet(t, hosts, 3, nil)
	res := f.List(context.Background(), bgjob.ListOptions{})
	if len(res) != 40 {
		t.Fatalf("%d results, want 40", len(res))
	}
	for i, r := range res {
		if r.Host != hosts[i] || r.Err != nil || len(r.Value.Jobs) != 0 {
			t.Errorf("result %d: %+v, want host %s with no jobs", i, r, hosts[i])
		}
	}
}

// TestFleetWaitNamesItsTimeout: a wait that times out on a host reached
// late names the timeout it was given, not what was left of it once
// connected: a 400ms wait over a 150ms connection said "waiting 250ms".
func TestFleetWaitNamesItsTimeout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	j := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Running})
	dial := func(ctx context.Context, host string) (*bgjob.Client, func(), error) {
		// A slow connection.
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
		c, err := bgjob.NewClient(local.New(), root, "")
		return c, func() {}, err
	}
	f := bgjob.NewFleet([]string{"slow"}, dial, 1)
	r := f.Wait(context.Background(), []string{j.Meta.ID}, bgjob.WaitOptions{Timeout: 400 * time.Millisecond})[0]
	if !errors.Is(r.Err, bgjob.ErrTimeout) || !strings.Contains(r.Err.Error(), "waiting 400ms: ") {
		t.Errorf("wait: %v; want a timeout naming 400ms", r.Err)
	}
}

// stalledRuntime is a host whose sessions open but never run a script (a
// ForceCommand, a login shell waiting on a prompt): Exec returns only when
// its context ends.
type stalledRuntime struct{}

func (stalledRuntime) Exec(ctx context.Context, _ string, _ io.Reader, _ io.Writer) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stalledRuntime) Host() string { return "stalled" }

// TestFleetFirstAnswerBound: the host timeout bounds the first answer of
// the calls that wait (Wait, WaitFor, Logs with Follow): a host whose
// script never begins gets ErrNoAnswer and the good host's result stands;
// a host that answered waits on past it, as long as its wait's own
// timeout (a wait of 4s over a host timeout of 1s times out, it is not
// cut; a bound of 300ms was too short for a look under -race on a
// loaded machine). Before, a stalled host held those calls for ever.
func TestFleetFirstAnswerBound(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ended := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Exited, Stdout: "out\n"})
	running := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Running})
	dial := func(ctx context.Context, host string) (*bgjob.Client, func(), error) {
		var rt bgjob.Runtime = local.New()
		if host == "stalled" {
			rt = stalledRuntime{}
		}
		c, err := bgjob.NewClient(rt, root, "")
		return c, func() {}, err
	}
	f := bgjob.NewFleet([]string{"stalled", "good"}, dial, 2, bgjob.WithHostTimeout(time.Second))
	ctx := context.Background()
	check := func(t *testing.T, errs []error) {
		t.Helper()
		if !errors.Is(errs[0], bgjob.ErrNoAnswer) || errs[0].Error() != "stalled: no answer within 1s" {
			t.Errorf("stalled: %v, want stalled: no answer within 1s", errs[0])
		}
		if errs[1] != nil {
			t.Errorf("good: %v", errs[1])
		}
	}
	t.Run("wait", func(t *testing.T) {
		res := f.Wait(ctx, []string{ended.Meta.ID}, bgjob.WaitOptions{})
		check(t, []error{res[0].Err, res[1].Err})
		if len(res[1].Value) != 1 || res[1].Value[0].ExitCode == nil {
			t.Errorf("good: %+v, want the ended job", res[1].Value)
		}
	})
	t.Run("wait for", func(t *testing.T) {
		res := f.WaitFor(ctx, ended.Meta.ID, "^out", bgjob.WaitForOptions{Timeout: time.Minute})
		check(t, []error{res[0].Err, res[1].Err})
		if string(res[1].Value.Match.Line) != "out\n" {
			t.Errorf("good: matched %q, want out", res[1].Value.Match.Line)
		}
	})
	t.Run("logs follow", func(t *testing.T) {
		var mu sync.Mutex
		var out bytes.Buffer
		res := f.Logs(ctx, ended.Meta.ID, bgjob.LogOptions{Follow: true}, func(string) (io.Writer, io.Writer) {
			w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
			return w, w
		})
		check(t, []error{res[0].Err, res[1].Err})
		if out.String() != "out\n" {
			t.Errorf("good printed %q, want out", out.String())
		}
	})
	t.Run("answered", func(t *testing.T) {
		g := bgjob.NewFleet([]string{"good"}, dial, 1, bgjob.WithHostTimeout(time.Second))
		r := g.Wait(ctx, []string{running.Meta.ID}, bgjob.WaitOptions{Timeout: 4 * time.Second})[0]
		if !errors.Is(r.Err, bgjob.ErrTimeout) || errors.Is(r.Err, bgjob.ErrNoAnswer) {
			t.Errorf("wait: %v, want its own timeout", r.Err)
		}
		w := g.WaitFor(ctx, running.Meta.ID, "^never", bgjob.WaitForOptions{Timeout: 4 * time.Second})[0]
		if !errors.Is(w.Err, bgjob.ErrTimeout) || errors.Is(w.Err, bgjob.ErrNoAnswer) {
			t.Errorf("wait for: %v, want its own timeout", w.Err)
		}
	})
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
