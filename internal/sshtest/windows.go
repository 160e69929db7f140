//go:build windows

// The package starts sshd and fabricates job processes with POSIX process
// groups: on Windows it is empty.

package sshtest
