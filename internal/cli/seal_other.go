//go:build !linux && !windows

package cli

// closeRangeCloexec is false: sealDescriptors marks the descriptors one
// by one.
func closeRangeCloexec() bool { return false }
