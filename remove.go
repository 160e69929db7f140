package bgjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/bgjob/bgjob/shellgen"
)

// Remove deletes jobs and their files. A job with live processes is
// refused with ErrBusy unless force, which stops it first.
func (c *Client) Remove(ctx context.Context, refs []string, force bool) ([]string, error) {
	removed, errs, err := c.remove(ctx, shellgen.Remove{Refs: refs, Force: force, Grace: DefaultGrace})
	if err != nil {
		return nil, err
	}
	return removed, errors.Join(errs...)
}

// remove runs a RemoveScript and returns the directories it removed and
// its refusals, one error each.
func (c *Client) remove(ctx context.Context, r shellgen.Remove) ([]string, []error, error) {
	t := c.target()
	script, err := shellgen.RemoveScript(t, r)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		removed []string
		errs    []error
	)
	err = c.exec(ctx, script, nil, false, reply{
		removed: func(dir string) error { removed = append(removed, dir); return nil },
		refused: func(err error) error { errs = append(errs, err); return nil },
	})
	if err != nil {
		return nil, nil, err
	}
	return removed, errs, nil
}
