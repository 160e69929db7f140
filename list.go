package bgjob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// ListOptions selects jobs for List.
type ListOptions struct {
	// Status keeps only jobs with this status ("" for all).
	Status jobdir.Status
	// Search keeps jobs whose id, name or command contains it, ignoring case.
	Search string
	// Name keeps the jobs of exactly this name ("" for all).
	Name string
	// Limit is the page size (0: no limit).
	Limit int
	// Cursor continues after the page that returned it.
	Cursor string
	// AllWorkspaces lists jobs of every workspace.
	AllWorkspaces bool
	// Owned keeps only the jobs that record an owner (Spec.Owner); the
	// host reads only meta.json of the others.
	Owned bool
	// Owner, unless nil, keeps only the jobs of that owner
	// (jobdir.Owner.Same), read as with Owned.
	Owner *jobdir.Owner
	// Labels, unless empty, keeps only the jobs that have every one of
	// these labels (Spec.Labels).
	Labels map[string]string
	// Count, unless nil, is handed every job of the selection, those
	// before Cursor and past the page included, in the order of the list:
	// for counts over the whole selection. The host then reads the files
	// of every job selected, not only the page's.
	Count func(jobdir.Job)
	// SkipRunningCount does not count the processes of a job whose
	// wrapper runs (running or queued: its Job.ProcessScan is
	// jobdir.ScanNone), for a list that does not show them, such as bgjob
	// ls's table: with many processes on the host the count is most of a
	// list's cost. An ended job's count, which tells of processes left
	// running, stays.
	SkipRunningCount bool
	// Ports reports the TCP ports the live processes of each job counted
	// listen on (jobdir.Job.Ports), for a list that shows them (ls
	// --json). On this machine a list with a job with live processes then
	// runs the script instead of being answered in Go.
	Ports bool
}

// Page is one page of List, newest job first.
type Page struct {
	Jobs []jobdir.Job `json:"jobs"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// List returns one page of jobs, newest first. Without filters, a page
// reads the directory names and the files of the jobs on the page only.
func (c *Client) List(ctx context.Context, o ListOptions) (Page, error) {
	page := Page{Jobs: []jobdir.Job{}}
	next, err := c.ListFunc(ctx, o, func(j jobdir.Job) error {
		page.Jobs = append(page.Jobs, j)
		return nil
	})
	page.Next = next
	return page, err
}

// ListFunc is List that hands each job to fn as the host reports it, so
// that a long list is never held in memory. It returns the cursor of the
// next page ("" on the last).
func (c *Client) ListFunc(ctx context.Context, o ListOptions, fn func(jobdir.Job) error) (string, error) {
	t := c.target()
	if o.AllWorkspaces {
		t.Workspace = ""
	}
	q := shellgen.List{AllWorkspaces: o.AllWorkspaces, Before: o.Cursor, Owned: o.owned(), SkipRunningCount: o.SkipRunningCount, Ports: o.Ports}
	filtered := o.Status != "" || o.Search != "" || o.Name != "" || o.owned() || len(o.Labels) > 0
	if o.Limit > 0 && !filtered {
		q.Max = o.Limit
	}
	if o.Count != nil {
		// Every job is counted; the page is chosen here.
		q.Before, q.Max = "", 0
	}
	req, err := shellgen.ListRequest(t, q)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUsage, err)
	}
	search := strings.ToLower(o.Search)
	var (
		n          int
		last, next string
		errs       []error
	)
	keep := func(j jobdir.Job) error {
		if !o.selects(j, search) {
			return nil
		}
		if o.Count != nil {
			o.Count(j)
			// As the host's Before: the ids that sort before the cursor.
			if o.Cursor != "" && j.ID >= o.Cursor || next != "" {
				return nil
			}
		}
		if o.Limit > 0 && n == o.Limit {
			next = last
			if o.Count != nil {
				return nil
			}
			return records.ErrStop
		}
		n++
		last = j.ID
		return fn(j)
	}
	h := records.Handler{
		Refused: c.gather(&errs),
		More:    func() { next = last },
		Job:     c.jobs(func(j jobdir.Job, _ string) error { return keep(j) }),
	}
	err = c.look(ctx, req, false, h)
	if err != nil {
		return "", err
	}
	return next, errors.Join(errs...)
}

// owned reports whether o keeps only the jobs that record an owner.
func (o ListOptions) owned() bool { return o.Owned || o.Owner != nil }

// selects reports whether o's filters keep j; search is o.Search in lower
// case.
func (o ListOptions) selects(j jobdir.Job, search string) bool {
	switch {
	case o.Status != "" && j.Status != o.Status, o.Name != "" && j.Name != o.Name:
		return false
	case o.owned() && j.Owner == nil, o.Owner != nil && !o.Owner.Same(*j.Owner):
		return false
	case !jobdir.HasLabels(j.Labels, o.Labels):
		return false
	}
	return search == "" || strings.Contains(strings.ToLower(j.ID+"\x00"+j.Name+"\x00"+j.Command), search)
}
