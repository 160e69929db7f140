//go:build !linux

package bgjob

import (
	"context"
	"io"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// nativeStatus is made in Go on Linux only (it reads /proc); elsewhere
// the script runs.
func (c *Client) nativeStatus([]string) (string, bool) { return "", false }

// nativeWait is made in Go on Linux only; elsewhere the script runs.
func (c *Client) nativeWait([]string, bool) (string, bool) { return "", false }

// nativeLogs is made in Go on Linux only; elsewhere the script runs.
func (c *Client) nativeLogs(shellgen.Logs) (io.Reader, func(), bool) { return nil, nil, false }

// nativeList is made in Go on Linux only; elsewhere the script runs.
func (c *Client) nativeList(shellgen.List) ([]string, bool) { return nil, false }

// nativeLaunch is made in Go on Linux only; elsewhere the script runs.
func (c *Client) nativeLaunch(context.Context, shellgen.Launch, records.Handler) (bool, error) {
	return false, nil
}
