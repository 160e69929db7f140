//go:build windows

// The package fabricates job processes with POSIX process groups: on
// Windows it is empty.

package jobdirtest
