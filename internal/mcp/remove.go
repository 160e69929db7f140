package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const removeDoc = `Remove ended jobs and their files (logs included), like "bgjob rm": the jobs named in ids, or with all every
ended job this client started through this server. A job still running, or whose processes outlive it, is never removed:
job_stop it first. Returns the ids removed and, for each job not removed, why.`

type removeIn struct {
	IDs  []string `json:"ids,omitempty" jsonschema:"job ids or names"`
	All  bool     `json:"all,omitempty" jsonschema:"remove every ended job this client started through this server"`
	Host string   `json:"host,omitempty" jsonschema:"host of the jobs (default: the server's host)"`
}

type removeOut struct {
	Removed    []string     `json:"removed" jsonschema:"ids of the jobs removed"`
	NotRemoved []notRemoved `json:"not_removed,omitempty" jsonschema:"the jobs that were not removed, and why"`
	Host       string       `json:"host,omitempty" jsonschema:"host of the jobs, as the call named it (absent: this machine)"`
}

// notRemoved is a job that job_remove did not remove.
type notRemoved struct {
	Ref   string `json:"ref,omitempty" jsonschema:"the job as ids named it, or its id"`
	Kind  string `json:"kind" jsonschema:"why, in one word: busy (still running, or its processes outlive it), not_found, foreign_files (its directory holds files bgjob did not write), read_only, or another kind of bgjob's errors"`
	Error string `json:"error" jsonschema:"why, in words"`
}

func (s *Server) remove(ctx context.Context, _ *sdk.CallToolRequest, in removeIn) (*sdk.CallToolResult, removeOut, error) {
	if len(in.IDs) == 0 && !in.All {
		return nil, removeOut{}, errors.New("name the jobs to remove in ids, or set all")
	}
	if len(in.IDs) > 0 && in.All {
		return nil, removeOut{}, errors.New("give ids or all, not both")
	}
	var (
		dirs []string
		errs error
		host string
	)
	err := s.do(ctx, in.Host, true, s.limit(0), func(ctx context.Context, c *bgjob.Client, h string) error {
		host = h
		refs := in.IDs
		if in.All {
			var err error
			if refs, err = s.ended(ctx, c); err != nil || len(refs) == 0 {
				return err
			}
		}
		var err error
		dirs, err = c.Remove(ctx, refs, bgjob.RemoveOptions{})
		if isJoined(err) {
			// The host's refusals, one per job (a failure of the call is
			// one error): the result says each.
			errs, err = err, nil
		}
		return err
	})
	if err != nil {
		return nil, removeOut{}, err
	}
	out := removeOut{Removed: []string{}, NotRemoved: refusals(errs), Host: host}
	var lines []string
	for _, d := range dirs {
		out.Removed = append(out.Removed, path.Base(d))
		lines = append(lines, "removed job "+path.Base(d))
	}
	for _, n := range out.NotRemoved {
		lines = append(lines, "not removed: "+n.Error)
	}
	if len(lines) == 0 {
		lines = append(lines, "no ended job of yours to remove on "+hostName(host))
	}
	return result("%s", strings.Join(lines, "\n")), out, nil
}

// ended returns the ids of the ended jobs this server started.
func (s *Server) ended(ctx context.Context, c *bgjob.Client) ([]string, error) {
	var ids []string
	_, err := c.ListFunc(ctx, bgjob.ListOptions{Owner: s.opts.Owner, SkipRunningCount: true}, func(j jobdir.Job) error {
		if j.Status.Ended() {
			ids = append(ids, j.ID)
		}
		return nil
	})
	return ids, err
}

// isJoined reports whether err joins several errors.
func isJoined(err error) bool {
	_, ok := err.(interface{ Unwrap() []error })
	return ok
}

// refusals are the jobs that err, the refusals of a Remove, says were not
// removed.
func refusals(err error) []notRemoved {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []notRemoved
	for _, e := range errs {
		n := notRemoved{Kind: string(bgjob.KindOf(e)), Error: e.Error()}
		if be := only(e); be != nil {
			n.Ref = be.Ref
		}
		if n.Kind == "" {
			n.Kind = "other"
		}
		if n.Kind == string(bgjob.KindBusy) {
			n.Error = fmt.Sprintf("job %s is still running, or its processes outlive it: job_stop it first", n.Ref)
		}
		out = append(out, n)
	}
	return out
}
