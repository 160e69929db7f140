package bgjob_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

func TestJobEvents(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	three := 3
	for _, tt := range []struct {
		name string
		job  jobdir.Job
		want string
	}{
		{"running", jobdir.Job{Status: jobdir.StatusRunning, Meta: jobdir.Meta{StartedAt: t0}}, "started running"},
		{"ready", jobdir.Job{Status: jobdir.StatusRunning, ReadyAt: at(1), Meta: jobdir.Meta{StartedAt: t0}}, "started running, ready running"},
		{"ready seen after the end", jobdir.Job{Status: jobdir.StatusExited, ExitCode: &three, ReadyAt: at(6), EndedAt: at(5), Meta: jobdir.Meta{StartedAt: t0}}, "started running, ready running, ended exited"},
		{"ready, lost", jobdir.Job{Status: jobdir.StatusLost, ReadyAt: at(1), Meta: jobdir.Meta{StartedAt: t0}}, "started running, ready running, ended lost"},
		{"exited", jobdir.Job{Status: jobdir.StatusExited, ExitCode: &three, EndedAt: at(5), Meta: jobdir.Meta{StartedAt: t0}}, "started running, ended exited"},
		{"queued", jobdir.Job{Status: jobdir.StatusQueued, Queued: "slot", Meta: jobdir.Meta{QueuedAt: at(0)}}, "queued queued"},
		{"not run", jobdir.Job{Status: jobdir.StatusNotRun, EndedAt: at(2), Meta: jobdir.Meta{QueuedAt: at(0)}}, "queued queued, ended not_run"},
		// Lost without an end time: at the last time known.
		{"lost", jobdir.Job{Status: jobdir.StatusLost, Meta: jobdir.Meta{StartedAt: t0}}, "started running, ended lost"},
		{"unreadable", jobdir.Job{Status: jobdir.StatusUnreadable}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.job
			j.ID = "20261207T100000-abcdef"
			var got []string
			for _, e := range bgjob.JobEvents(j) {
				got = append(got, e.Event+" "+string(e.Status))
				if p, err := bgjob.ParseEventsSince(e.Cursor, time.Now()); err != nil || !p.Mark.Time.Equal(e.Time) || p.Mark.ID != j.ID {
					t.Errorf("%s: cursor %q reads as %+v, %v", e.Event, e.Cursor, p, err)
				}
				if e.Event == bgjob.EventEnded && e.Time.IsZero() {
					t.Errorf("ended at the zero time")
				}
			}
			if s := strings.Join(got, ", "); s != tt.want {
				t.Errorf("events %q, want %q", s, tt.want)
			}
		})
	}
}

func TestParseEventsSince(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for s, want := range map[string]time.Time{
		"10m":                  now.Add(-10 * time.Minute),
		"2026-12-07T09:00:00Z": now.Add(-time.Hour),
		"1796637600000000000.4.20261207T100000-abcdef": time.Unix(0, 1796637600000000000),
	} {
		p, err := bgjob.ParseEventsSince(s, now)
		if err != nil || !p.Mark.Time.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", s, p.Mark.Time, err, want)
		}
	}
	for _, s := range []string{"", "yesterday", "-5m", "1.9.20261207T100000-abcdef", "1.1.not-an-id", "1.1.~2.1.", "1.1.20261207T100000-abcdef~x"} {
		if _, err := bgjob.ParseEventsSince(s, now); !errors.Is(err, bgjob.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", s, err)
		}
	}
}

// TestEventsResume: a reader that stops after each event and comes back
// with the cursor of the last it got gets every event exactly once, in
// the order one reading gets them.
func TestEventsResume(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for _, cmd := range []string{"exit 1", "true", "exit 7"} {
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{cmd}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}, After: ids[:1]}); err != nil {
		t.Fatal(err)
	}
	all := func(since bgjob.EventsSince, max int) []bgjob.Event {
		var evs []bgjob.Event
		stop := errors.New("enough")
		err := c.Events(ctx, nil, bgjob.EventOptions{Since: since}, func(e bgjob.Event) error {
			evs = append(evs, e)
			if len(evs) == max {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			t.Fatal(err)
		}
		return evs
	}
	// Every job ended: the whole list is there.
	for deadline := time.Now().Add(time.Minute); !settledEnded(t, c); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the jobs did not end within a minute")
		}
	}
	whole := all(bgjob.EventsSince{}, 0)
	if len(whole) != 9 { // 4 started, 4 ended, 1 queued
		t.Fatalf("%d events, want 9: %+v", len(whole), whole)
	}
	var got []bgjob.Event
	var since bgjob.EventsSince
	for range 20 {
		evs := all(since, 1)
		if len(evs) == 0 {
			break
		}
		got = append(got, evs[0])
		if since, err = bgjob.ParseEventsSince(evs[0].Cursor, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(whole) {
		t.Fatalf("resumed %d events, want %d", len(got), len(whole))
	}
	for i := range got {
		if g, w := got[i].ID+" "+got[i].Event, whole[i].ID+" "+whole[i].Event; g != w {
			t.Errorf("event %d: %s, want %s", i, g, w)
		}
	}
}

// settledEnded reports whether every job of c has ended.
func settledEnded(t *testing.T, c *bgjob.Client) bool {
	t.Helper()
	p, err := c.List(context.Background(), bgjob.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range p.Jobs {
		if !j.Status.Ended() {
			return false
		}
	}
	return true
}

// TestEventsSinceCursor: a cursor's mark and the places seen above it
// read back as they were written; an event at a seen place, or at or
// below the mark, is not after it.
func TestEventsSinceCursor(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	s := bgjob.EventsSince{Mark: bgjob.EventPos{Time: t0}, Seen: []bgjob.EventPos{{Time: t0.Add(time.Second), ID: "20261207T100000-abcdef", Kind: 4}}}
	back, err := bgjob.ParseEventsSince(s.String(), time.Now())
	if err != nil || back.String() != s.String() {
		t.Fatalf("%q read back as %q, %v", s.String(), back.String(), err)
	}
}

// TestEventsResumeFollow: while slotted jobs are queued, started and
// ended (a queued job's files can appear after another's end), a follow's
// every line carries a cursor from which a reader gets exactly the
// derived events the follow delivered after that line: on this machine,
// woken by file events, and through scripts alone, woken by the host's
// watch, as over SSH.
func TestEventsResumeFollow(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   bgjob.Runtime
	}{{"local", local.New()}, {"scripts", scriptOnly{local.New()}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eventsResumeFollow(t, tc.rt)
		})
	}
}

func eventsResumeFollow(t *testing.T, rt bgjob.Runtime) {
	c, err := bgjob.NewClient(rt, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Run(ctx, bgjob.Spec{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		got  []bgjob.Event
		done = make(chan error, 1)
	)
	go func() {
		done <- c.Events(ctx, nil, bgjob.EventOptions{Follow: true}, func(e bgjob.Event) error {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
			return nil
		})
	}()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := c.Run(context.Background(), bgjob.Spec{Argv: []string{fmt.Sprintf("sleep 0.%d", i)}, Slots: 2}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// 1 + 8 jobs: started and ended each, queued for the 8.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2+3*8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events within a minute, want %d", n, 2+3*8)
		}
	}
	cancel()
	<-done
	key := func(e bgjob.Event) string { return e.ID + " " + e.Event }
	for i, e := range got {
		since, err := bgjob.ParseEventsSince(e.Cursor, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var replay []string
		if err := c.Events(context.Background(), nil, bgjob.EventOptions{Since: since}, func(e bgjob.Event) error {
			replay = append(replay, key(e))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, later := range got[i+1:] {
			want = append(want, key(later))
		}
		slices.Sort(replay)
		slices.Sort(want)
		if !slices.Equal(replay, want) {
			t.Errorf("after line %d (%s, cursor %s): replay %v, want %v", i, key(e), e.Cursor, replay, want)
		}
	}
}
