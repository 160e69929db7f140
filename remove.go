package bgjob

import (
	"context"
	"errors"
	"fmt"

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
	)
	err = c.exec(ctx, script, nil, false, records.Handler{
		Removed: func(dir string) error { removed = append(removed, dir); return nil },
		Refused: c.gather(&errs),
	})
	if err != nil {
		return removed, err
	}
	return removed, errors.Join(errs...)
}
