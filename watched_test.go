package bgjob

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// fakeWatcher keeps the context of each watch it made.
type fakeWatcher struct {
	watches []context.Context
	events  chan string
}

func (w *fakeWatcher) Watch(ctx context.Context, dirs []string) (<-chan string, error) {
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
