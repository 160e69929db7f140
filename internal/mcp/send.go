package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

const sendDoc = `Write data to the standard input of a job started with stdin: true (add "\n" to end a line), or close it
with eof. Returns once the job has taken the data.`

type sendIn struct {
	ID   string `json:"id" jsonschema:"job id or name"`
	Data string `json:"data,omitempty" jsonschema:"bytes to write"`
	EOF  bool   `json:"eof,omitempty" jsonschema:"close the job's standard input instead"`
	Host string `json:"host,omitempty" jsonschema:"host of the job (default: the server's host)"`
}

func (s *Server) send(ctx context.Context, _ *sdk.CallToolRequest, in sendIn) (*sdk.CallToolResult, jobView, error) {
	if in.EOF && in.Data != "" {
		return nil, jobView{}, errors.New("give data or eof, not both (send the data first)")
	}
	var (
		j    jobdir.Job
		host string
	)
	// Not repeated after a drop: the job may have read part of the data.
	err := s.do(ctx, in.Host, false, s.limit(sendTimeout), func(ctx context.Context, c *bgjob.Client, h string) (err error) {
		host = h
		j, err = c.Send(ctx, in.ID, strings.NewReader(in.Data), bgjob.SendOptions{EOF: in.EOF, Timeout: sendTimeout})
		if errors.Is(err, bgjob.ErrTimeout) {
			err = fmt.Errorf("%w: the job did not read its input within %s", err, sendTimeout)
		}
		return err
	})
	if err != nil {
		return nil, jobView{}, err
	}
	v := viewOf(j)
	v.Host = host
	what := fmt.Sprintf("sent %d bytes to", len(in.Data))
	if in.EOF {
		what = "closed the input of"
	}
	return result("%s job %s (%s)", what, j.ID, exitText(viewOf(j))), v, nil
}
