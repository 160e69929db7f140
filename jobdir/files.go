package jobdir

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// More file names inside a job directory and its workspace.
const (
	// NamesDir is the workspace's name index: NamesDir/NAME holds the id
	// of the newest job launched as NAME (see EncodeNameIndex).
	NamesDir = ".names"
	// DroppedSuffix ends the name of a STREAM.dropped file, e.g.
	// "stdout" + DroppedSuffix.
	DroppedSuffix = ".dropped"
)

// EndedAtLayout is the time layout of ended_at and of meta.json's
// host_started_at (always UTC, to the millisecond). Where neither the
// wrapper's shell has EPOCHREALTIME nor the host's date(1) has %N (BSD;
// busybox before this version) the wrapper writes whole seconds
// ("2006-01-02T15:04:05Z"); readers take both (RFC 3339).
const EndedAtLayout = "2006-01-02T15:04:05.000Z"

// The small job files are one line each. Their encoders below return the
// exact bytes the wrapper, the launcher or stop writes; their decoders take
// the file's first line, with or without its newline, as an Observation
// holds it.

// EncodeExitCode returns the content of exit_code: the decimal status and
// a newline.
func EncodeExitCode(code int) []byte { return []byte(strconv.Itoa(code) + "\n") }

// DecodeExitCode parses the first line of exit_code.
func DecodeExitCode(line string) (int, error) {
	code, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("exit_code: %q is not a number", line)
	}
	return code, nil
}

// EncodeEndedAt returns the content of ended_at: t in UTC to the
// millisecond (EndedAtLayout) and a newline.
func EncodeEndedAt(t time.Time) []byte { return []byte(t.UTC().Format(EndedAtLayout) + "\n") }

// DecodeEndedAt parses the first line of ended_at.
func DecodeEndedAt(line string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(line))
	if err != nil {
		return time.Time{}, fmt.Errorf("ended_at: %w", err)
	}
	return t, nil
}

// ReadyAtLayout is the time layout of ready_at: RFC 3339 in UTC, to the
// nanosecond.
const ReadyAtLayout = "2006-01-02T15:04:05.000000000Z"

// EncodeReadyAt returns the content of ready_at: t in UTC to the
// nanosecond (ReadyAtLayout) and a newline.
func EncodeReadyAt(t time.Time) []byte { return []byte(t.UTC().Format(ReadyAtLayout) + "\n") }

// DecodeReadyAt parses the first line of ready_at.
func DecodeReadyAt(line string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
	if err != nil {
		return time.Time{}, fmt.Errorf("ready_at: %w", err)
	}
	return t, nil
}

// EncodeStop returns the content of the stop marker: "REASON SIGNAL" and a
// newline, REASON "stop", "timeout" or "session_end" and SIGNAL the first
// signal sent (e.g. "TERM").
func EncodeStop(reason, signal string) []byte { return []byte(reason + " " + signal + "\n") }

// DecodeStop parses the first line of the stop marker, without the blanks
// that pad it to the length of the launcher's stop.tmp; ok is false when
// it is not "REASON SIGNAL".
func DecodeStop(line string) (reason, signal string, ok bool) {
	reason, signal, ok = strings.Cut(strings.TrimRight(line, " \n"), " ")
	return reason, signal, ok && reason != ""
}

// EncodeLeftovers returns the content of leftovers, the record that two
// scans made after the job ended found none of its processes: 0 and a
// newline (a look at the job no longer scans; docs/format.md).
func EncodeLeftovers() []byte { return []byte("0\n") }

// EncodeDropped returns the content of STREAM.dropped: how many leading
// bytes of STREAM.log the --max-log-size cap dropped, and a newline.
func EncodeDropped(n int64) []byte { return []byte(strconv.FormatInt(n, 10) + "\n") }

// DecodeDropped parses the first line of STREAM.dropped; anything but a
// count (a missing file: "") is 0.
func DecodeDropped(line string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// EncodeNameIndex returns the content of .names/NAME: the id of the newest
// job launched as NAME and a newline. It is a hint: a reader trusts it only
// if that job's meta.json carries the name.
func EncodeNameIndex(id string) []byte { return []byte(id + "\n") }
