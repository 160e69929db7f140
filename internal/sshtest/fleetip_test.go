package sshtest

import "testing"

// TestFleetIP: the hosts of a fleet past the 254th go on in the next
// loopback /24, never on a network or broadcast address, each its own.
func TestFleetIP(t *testing.T) {
	for i, want := range map[int]string{1: "127.0.2.1", 254: "127.0.2.254", 255: "127.0.3.1", 508: "127.0.3.254", 509: "127.0.4.1", MaxFleet: "127.0.5.254"} {
		if got := fleetIP(i); got != want {
			t.Errorf("fleetIP(%d) = %s, want %s", i, got, want)
		}
	}
	seen := map[string]bool{}
	for i := 1; i <= MaxFleet; i++ {
		ip := fleetIP(i)
		if seen[ip] {
			t.Fatalf("fleetIP(%d) = %s twice", i, ip)
		}
		seen[ip] = true
	}
}
