package cli

import (
	"context"
	"errors"
	"io"

	"github.com/bgjob/bgjob"
)

type closingRuntime interface {
	bgjob.Runtime
	io.Closer
}

func (a *app) dialSSH(ctx context.Context) (closingRuntime, error) {
	return nil, errors.New("the SSH runtime is not wired in yet")
}
