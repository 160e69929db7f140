package bgjob

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// RemoveOptions tunes Remove.
type RemoveOptions struct {
	// Force stops a job that has live processes first (TERM, KILL after
	// DefaultGrace), as Stop does; without it such a job is refused with
	// ErrBusy.
	Force bool
}

// Remove deletes jobs and their files and returns the directories it
// removed, with an error for each job it refused. A removal cut short
// (ctx done, the host's time up) returns those it removed before, with
// its error.
func (c *Client) Remove(ctx context.Context, refs []string, o RemoveOptions) ([]string, error) {
	script, err := shellgen.RemoveScript(c.target(), shellgen.Remove{Refs: refs, Force: o.Force, Grace: DefaultGrace})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		removed []string
		errs    []error
		going   = underway{}
	)
	err = c.exec(ctx, script, nil, false, records.Handler{
		Removing: going.began,
		Removed: func(dir string) error {
			going.done(dir)
			removed = append(removed, dir)
			return nil
		},
		Refused: c.gather(&errs),
	})
	if err != nil {
		return removed, going.cut(err)
	}
	return removed, errors.Join(errs...)
}

// underway holds the job directories whose removal a script began (a d
// record) and has not told done (R): where the removal is cut short, they
// may be gone.
type underway map[string]bool

func (u underway) began(dir string) error {
	u[dir] = true
	return nil
}

func (u underway) done(dir string) { delete(u, dir) }

// cut is err, the error of a removal cut short, naming the jobs whose
// removal was under way then (a batch whose directories went, not yet
// told): not a word of them would say they stay, nor that they went.
func (u underway) cut(err error) error {
	if err == nil || len(u) == 0 {
		return err
	}
	ids := make([]string, 0, len(u))
	for d := range u {
		ids = append(ids, path.Base(d))
	}
	slices.Sort(ids)
	return cutError{err: err, ids: ids}
}

// cutError is the error of a removal cut short while it removed ids.
type cutError struct {
	err error
	ids []string
}

func (e cutError) Error() string {
	return fmt.Sprintf("cut short while removing %d jobs, which may be gone: %s: %v", len(e.ids), strings.Join(e.ids, " "), e.err)
}

func (e cutError) Unwrap() error { return e.err }

// didBefore is e said of err, the deadline's error that cut the call
// (Within).
func (e cutError) didBefore(err error) error { return cutError{err: err, ids: e.ids} }
