//go:build !linux

package proc

import "os"

// Open opens name to read (os.Open; on Linux outside Go's poller).
func Open(name string) (*os.File, error) { return os.Open(name) }
