//go:build !linux

package local

import (
	"context"
	"io"

	"github.com/bgjob/bgjob/shellgen"
)

// look is made in Go on Linux only (it reads /proc); elsewhere the
// script runs.
func (a answerer) look(context.Context, any, io.Reader) (io.Reader, func(), bool, bool) {
	return nil, nil, false, false
}

// launch is made in Go on Linux only; elsewhere the script runs.
func (a answerer) launch(context.Context, shellgen.Launch, shellgen.LaunchFiles) (string, bool, error) {
	return "", false, nil
}
