package jobdir_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// TestSmallFiles checks the one-line job files: the exact bytes each
// encoder writes and that the decoder reads them back, with and without the
// newline (an observation holds the first line).
func TestSmallFiles(t *testing.T) {
	for _, code := range []int{0, 1, 127, 143, 255} {
		b := jobdir.EncodeExitCode(code)
		for _, line := range []string{string(b), string(b[:len(b)-1])} {
			if got, err := jobdir.DecodeExitCode(line); err != nil || got != code {
				t.Errorf("DecodeExitCode(%q) = %d, %v; want %d", line, got, err, code)
			}
		}
	}
	if got := string(jobdir.EncodeExitCode(143)); got != "143\n" {
		t.Errorf("EncodeExitCode(143) = %q", got)
	}
	for _, bad := range []string{"", "x", "1.5", "99999999999999999999"} {
		if _, err := jobdir.DecodeExitCode(bad); err == nil {
			t.Errorf("DecodeExitCode(%q) succeeded", bad)
		}
	}

	at := time.Date(2026, 11, 30, 1, 20, 0, 999_400_000, time.FixedZone("CET", 3600))
	if got := string(jobdir.EncodeEndedAt(at)); got != "2026-11-30T00:20:00.999Z\n" {
		t.Errorf("EncodeEndedAt() = %q, want UTC to the millisecond", got)
	}
	if got, err := jobdir.DecodeEndedAt(string(jobdir.EncodeEndedAt(at))); err != nil || !got.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("DecodeEndedAt() = %v, %v", got, err)
	}
	// Whole seconds, from a host whose date(1) has no %N, and earlier versions.
	if got, err := jobdir.DecodeEndedAt("2026-11-30T00:20:00Z\n"); err != nil || !got.Equal(at.Truncate(time.Second)) {
		t.Errorf("DecodeEndedAt(whole seconds) = %v, %v", got, err)
	}
	if got, err := jobdir.DecodeEndedAt("2026-11-30T00:20:00Z    "); err != nil || !got.Equal(at.Truncate(time.Second)) {
		t.Errorf("DecodeEndedAt(whole seconds, padded) = %v, %v", got, err)
	}
	if got, err := jobdir.DecodeExitCode("0  "); err != nil || got != 0 {
		t.Errorf("DecodeExitCode(padded) = %v, %v", got, err)
	}
	if _, err := jobdir.DecodeEndedAt("yesterday"); err == nil {
		t.Error("DecodeEndedAt(yesterday) succeeded")
	}

	if got := string(jobdir.EncodeStop("timeout", "TERM")); got != "timeout TERM\n" {
		t.Errorf("EncodeStop() = %q", got)
	}
	// As a stop writes it over the launcher's blank: padded to its length.
	for _, line := range []string{"stop INT\n", "stop INT", "stop INT" + strings.Repeat(" ", 23)} {
		if r, s, ok := jobdir.DecodeStop(line); !ok || r != "stop" || s != "INT" {
			t.Errorf("DecodeStop(%q) = %q, %q, %v", line, r, s, ok)
		}
	}
	for _, bad := range []string{"", "stop", " TERM"} {
		if _, _, ok := jobdir.DecodeStop(bad); ok {
			t.Errorf("DecodeStop(%q) ok", bad)
		}
	}

	if got := string(jobdir.EncodeDropped(65536)); got != "65536\n" {
		t.Errorf("EncodeDropped() = %q", got)
	}
	for line, want := range map[string]int64{"65536\n": 65536, "7": 7, "": 0, "-3": 0, "x": 0} {
		if got := jobdir.DecodeDropped(line); got != want {
			t.Errorf("DecodeDropped(%q) = %d, want %d", line, got, want)
		}
	}

	if got := string(jobdir.EncodeNameIndex(testID)); got != testID+"\n" {
		t.Errorf("EncodeNameIndex() = %q", got)
	}
}
