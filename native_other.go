//go:build !linux

package bgjob

// nativeStatus is made in Go on Linux only (it reads /proc); elsewhere
// the script runs.
func (c *Client) nativeStatus([]string) (string, bool) { return "", false }
