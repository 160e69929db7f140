package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const stopDoc = `Stop jobs, like "bgjob stop": signal (default TERM) to each job's whole process group, KILL after grace_sec
(default 2; 0: KILL at once, without the signal when it is TERM). Returns each job's final status and exit code once its processes are gone. all stops every running job
of the workspace, not only the ones this session started.`

type stopIn struct {
	IDs      []string          `json:"ids,omitempty" jsonschema:"job ids or names"`
	All      bool              `json:"all,omitempty" jsonschema:"stop every running job of the workspace"`
	Labels   map[string]string `json:"labels,omitempty" jsonschema:"stop the running jobs of the workspace that have every one of these labels, {\"KEY\": \"VALUE\"}"`
	Signal   string            `json:"signal,omitempty" jsonschema:"first signal (default TERM)"`
	GraceSec *float64          `json:"grace_sec,omitempty" jsonschema:"seconds between the signal and KILL (default 2; 0: KILL at once, without the signal when it is TERM)"`
	Host     string            `json:"host,omitempty" jsonschema:"host of the jobs (default: the server's host)"`
}

type stopOut struct {
	Jobs []jobView `json:"jobs" jsonschema:"each job stopped, with its final status"`
}

func (s *Server) stop(ctx context.Context, _ *sdk.CallToolRequest, in stopIn) (*sdk.CallToolResult, stopOut, error) {
	switch given := btoi(len(in.IDs) > 0) + btoi(in.All) + btoi(len(in.Labels) > 0); {
	case given == 0:
		return nil, stopOut{}, errors.New("name the jobs to stop in ids, or give labels, or set all")
	case given > 1:
		return nil, stopOut{}, errors.New("give one of ids, labels and all")
	}
	var grace *time.Duration // nil: the library's default
	if in.GraceSec != nil {
		g, err := seconds("grace_sec", *in.GraceSec, maxGrace)
		if err != nil {
			return nil, stopOut{}, err
		}
		grace = &g
	}
	var (
		jobs []jobdir.Job
		host string
	)
	err := s.do(ctx, in.Host, true, s.limit(graceOf(grace)), func(ctx context.Context, c *bgjob.Client, h string) (err error) {
		host = h
		jobs, err = c.Stop(ctx, in.IDs, bgjob.StopOptions{Signal: in.Signal, Grace: grace, All: in.All, Labels: in.Labels})
		return err
	})
	if err != nil {
		return nil, stopOut{}, err
	}
	out := stopOut{Jobs: []jobView{}}
	var lines []string
	// The result tells how they stand: the digest tells them no more.
	s.digest.shown(host, jobs)
	for _, j := range jobs {
		v := viewOf(j)
		v.Host = host
		out.Jobs = append(out.Jobs, v)
		lines = append(lines, fmt.Sprintf("job %s %s", j.ID, exitText(viewOf(j))))
	}
	if len(lines) == 0 {
		lines = append(lines, "no running jobs")
	}
	return result("%s", strings.Join(lines, "\n")), out, nil
}

// graceOf is the grace of a stop (nil: the library's default).
func graceOf(g *time.Duration) time.Duration {
	if g == nil {
		return bgjob.DefaultGrace
	}
	return *g
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
