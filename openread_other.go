//go:build !linux

package bgjob

import "os"

// openRead opens name to read (os.Open; on Linux outside Go's poller).
func openRead(name string) (*os.File, error) { return os.Open(name) }
