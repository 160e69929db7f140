//go:build race

package e2e

// raceBuild: this test binary has the race detector in it.
const raceBuild = true
