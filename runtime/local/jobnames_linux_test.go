package local

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// TestNewestFirst: the iterator gives every job once, newest first,
// whatever k, however far past k it is asked; jobs made after the first
// listing, newer than all, are not given past k.
func TestNewestFirst(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 30} {
		ws := t.TempDir()
		var want []string
		for i := range n {
			id := jobdir.NewID(time.Unix(int64(1e9+(i*7919)%n*3), 0))
			if err := os.Mkdir(filepath.Join(ws, id), 0o700); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		slices.Sort(want)
		slices.Reverse(want)
		for _, k := range []int{0, 1, 2, 3, 21, n - 1, n, n + 1} {
			if k < 0 {
				continue
			}
			var late string
			next := newestFirst(ws, "", k)
			var got []string
			for {
				id, more, ok := next()
				if !ok {
					t.Fatalf("%d jobs, k %d: not ok", n, k)
				}
				if !more {
					break
				}
				got = append(got, id)
				if len(got) == k {
					// One made now, newer than all: past k the rest
					// are those before the last given.
					late = filepath.Join(ws, jobdir.NewID(time.Unix(2e9, 0)))
					if err := os.Mkdir(late, 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
			if late != "" {
				if err := os.Remove(late); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d jobs, k %d: got %v, want %v", n, k, got, want)
			}
		}
	}
}

// TestJobNames: the listing keeps directories named as ids before the
// cursor, not files, links or other names; with k, the greatest k and
// whether there were more.
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
	for _, c := range []struct {
		before string
		k      int
		want   []string
		more   bool
	}{
		{"", 0, ids, false}, {ids[2], 0, ids[:2], false}, {ids[0], 0, nil, false},
		{"", 1, ids[2:], true}, {"", 2, ids[1:], true}, {"", 3, ids, false}, {"", 4, ids, false}, {ids[2], 1, ids[1:2], true},
	} {
		got, more, ok := jobNames(ws, c.before, c.k)
		if !ok || !slices.Equal(got, c.want) || more != c.more {
			t.Errorf("before %q, k %d: %v, more %v, %v; want %v, more %v", c.before, c.k, got, more, ok, c.want, c.more)
		}
	}
	if _, _, ok := jobNames(filepath.Join(ws, "none"), "", 0); ok {
		t.Error("a workspace not there: ok")
	}
}
