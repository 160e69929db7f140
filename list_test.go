package bgjob_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// List's Count sees every job of the selection, those before the cursor
// and past the page too, while the page is the one a list without Count
// returns; Name and Owner select as Status does.
func TestListCountSeesTheWholeSelection(t *testing.T) {
	root := t.TempDir()
	self := bgjob.SelfOwner(jobdir.OwnerMCP)
	other := self
	other.PID++
	var ids []string // newest first
	start := time.Now().Add(-time.Hour)
	for i, j := range []jobdirtest.Job{
		{Meta: jobdir.Meta{Name: "web", Owner: &self}},
		{Meta: jobdir.Meta{Name: "build", Owner: &other}},
		{Meta: jobdir.Meta{Name: "build", Owner: &self}},
		{Meta: jobdir.Meta{Name: "builds"}},
		{Meta: jobdir.Meta{Name: "web"}, State: jobdirtest.Killed},
	} {
		// A second apart: ids sort as the jobs started.
		j.Meta.StartedAt = start.Add(time.Duration(i) * time.Second)
		d := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, j)
		ids = append([]string{d.Meta.ID}, ids...)
	}
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		o      bgjob.ListOptions
		page   []string
		next   string
		counts map[jobdir.Status]int
	}{
		{"first page", bgjob.ListOptions{Limit: 2}, ids[:2], ids[1], map[jobdir.Status]int{jobdir.StatusExited: 4, jobdir.StatusKilled: 1}},
		{"second page", bgjob.ListOptions{Limit: 2, Cursor: ids[1]}, ids[2:4], ids[3], map[jobdir.Status]int{jobdir.StatusExited: 4, jobdir.StatusKilled: 1}},
		{"last page", bgjob.ListOptions{Limit: 2, Cursor: ids[3]}, ids[4:], "", map[jobdir.Status]int{jobdir.StatusExited: 4, jobdir.StatusKilled: 1}},
		{"name", bgjob.ListOptions{Name: "build"}, []string{ids[2], ids[3]}, "", map[jobdir.Status]int{jobdir.StatusExited: 2}},
		{"owner", bgjob.ListOptions{Owner: &self, Limit: 1}, ids[2:3], ids[2], map[jobdir.Status]int{jobdir.StatusExited: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts := map[jobdir.Status]int{}
			tc.o.Count = func(j jobdir.Job) { counts[j.Status]++ }
			var page []string
			next, err := c.ListFunc(context.Background(), tc.o, func(j jobdir.Job) error {
				page = append(page, j.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(page, tc.page) || next != tc.next || !mapsEqual(counts, tc.counts) {
				t.Errorf("page %v, next %q, counts %v; want %v, %q, %v", page, next, counts, tc.page, tc.next, tc.counts)
			}
			// Without Count, the same page.
			tc.o.Count = nil
			p, err := c.List(context.Background(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var without []string
			for _, j := range p.Jobs {
				without = append(without, j.ID)
			}
			if !slices.Equal(without, tc.page) || p.Next != tc.next {
				t.Errorf("without Count: page %v, next %q; want %v, %q", without, p.Next, tc.page, tc.next)
			}
		})
	}
}

func mapsEqual(a, b map[jobdir.Status]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
