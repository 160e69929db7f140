package local

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// TestNewestFirst: the iterator gives every name once, greatest first,
// whatever k, and however far past k it is asked.
func TestNewestFirst(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 30, 200} {
		names := make([]string, n)
		for i := range names {
			names[i] = jobdir.NewID(time.Unix(int64(1e9+rand.IntN(1e6)), 0))
		}
		want := slices.Clone(names)
		slices.Sort(want)
		slices.Reverse(want)
		for _, k := range []int{0, 1, 2, 3, 21, n - 1, n, n + 1} {
			next := newestFirst(slices.Clone(names), k)
			var got []string
			for {
				name, ok := next()
				if !ok {
					break
				}
				got = append(got, name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d names, k %d: got %v, want %v", n, k, got, want)
			}
		}
	}
}

// TestJobNames: the listing keeps directories named as ids before the
// cursor, not files, links or other names.
func TestJobNames(t *testing.T) {
	ws := t.TempDir()
	ids := []string{jobdir.NewID(time.Unix(1e9, 0)), jobdir.NewID(time.Unix(1e9+1, 0)), jobdir.NewID(time.Unix(1e9+2, 0))}
	for _, id := range ids {
		if err := os.Mkdir(filepath.Join(ws, id), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, jobdir.NewID(time.Unix(1e9+3, 0))), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, ids[0]), filepath.Join(ws, jobdir.NewID(time.Unix(1e9+4, 0)))); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"1abc", ".names", "x"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for before, want := range map[string][]string{"": ids, ids[2]: ids[:2], ids[0]: nil} {
		got, ok := jobNames(ws, before)
		slices.Sort(got)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("before %q: %v, %v; want %v", before, got, ok, want)
		}
	}
	if _, ok := jobNames(filepath.Join(ws, "none"), ""); ok {
		t.Error("a workspace not there: ok")
	}
}
