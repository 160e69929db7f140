package bgjob

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// fakeWatcher keeps the context of each watch it made; from the failFrom-th
// on (0: never), a watch fails.
type fakeWatcher struct {
	watches  []context.Context
	events   chan string
	failFrom int
}

func (w *fakeWatcher) Watch(ctx context.Context, dirs []string) (<-chan string, error) {
	if w.failFrom > 0 && len(w.watches)+1 >= w.failFrom {
		return nil, errors.New("no watch")
	}
	w.watches = append(w.watches, ctx)
	return w.events, nil
}

// watching says whether a watch is in place.
func (w *fakeWatcher) watching() bool {
	return len(w.watches) > 0 && w.watches[len(w.watches)-1].Err() == nil
}

// TestWatchedFlood: a look that returns errFlood is followed by another
// without the watch (no wake for each write of a flood); once a look
// returns errPending the watch is made again and a look comes at once;
// the changes that came during a look are one wake, each seen by keep.
func TestWatchedFlood(t *testing.T) {
	w := &fakeWatcher{events: make(chan string, 16)}
	var looks []bool // whether a watch was in place at each look
	answers := []error{errFlood, errFlood, errPending, errPending, nil}
	look := func(context.Context) error {
		looks = append(looks, w.watching())
		if len(looks) == 4 {
			w.events <- "stdout.log"
			w.events <- "stdout.log"
			w.events <- "exit_code"
		}
		return answers[len(looks)-1]
	}
	var kept []string
	keep := func(name string) bool { kept = append(kept, name); return true }
	if _, err := watched(context.Background(), w, []string{"d"}, 0, keep, look); err != nil {
		t.Fatal(err)
	}
	// The first look with the watch; the second and third without it
	// (after each errFlood); the fourth once it is made again; the
	// fifth for the changes during the fourth.
	if want := []bool{true, false, false, true, true}; !slices.Equal(looks, want) {
		t.Errorf("a watch in place at each look: %v, want %v", looks, want)
	}
	if len(w.watches) != 2 {
		t.Errorf("%d watches made, want 2", len(w.watches))
	}
	if want := []string{"stdout.log", "stdout.log", "exit_code"}; !slices.Equal(kept, want) {
		t.Errorf("keep saw %v, want %v", kept, want)
	}
	if !errors.Is(errFlood, errPending) {
		t.Error("errFlood is not an errPending")
	}
}

// TestWatchedFloodNoWatchAgain: where the watch cannot be made again after
// a flood (its directory gone, no inotify instance left), the looks go on
// by the tick; the wait does not end in error or crash.
func TestWatchedFloodNoWatchAgain(t *testing.T) {
	w := &fakeWatcher{events: make(chan string, 16), failFrom: 2}
	answers := []error{errFlood, errPending, errPending, nil}
	looks := 0
	look := func(context.Context) error {
		looks++
		return answers[looks-1]
	}
	if _, err := watched(context.Background(), w, []string{"d"}, 0, nil, look); err != nil {
		t.Fatal(err)
	}
	if looks != 4 || len(w.watches) != 1 {
		t.Errorf("%d looks and %d watches, want 4 and 1", looks, len(w.watches))
	}
}
