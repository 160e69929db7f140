package bgjob

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLogWakesFirstLook: the first look of a follow on this machine comes
// right after a script's read, so it is Go's, unless a file that ends the
// job appeared before the watch could see it: then the script's.
func TestLogWakesFirstLook(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		quick bool
	}{
		{"running", nil, true},
		{"launcher's blank exit_code.tmp", map[string]string{"exit_code.tmp": "   \n"}, true},
		{"a status begun in exit_code.tmp", map[string]string{"exit_code.tmp": " 1\n"}, true},
		{"exit_code", map[string]string{"exit_code": "0\n"}, false},
		{"written exit_code.tmp", map[string]string{"exit_code.tmp": "0\n"}, false},
		{"not_run", map[string]string{"not_run": "stopped while queued\n"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, quick := logWakes(dir, 0)
			if got := quick(); got != c.quick {
				t.Errorf("first look quick = %v, want %v", got, c.quick)
			}
			// Later ticks within followTick stay Go's either way: only
			// the first look asks about the files.
			if !quick() {
				t.Errorf("the tick after the first look: the script's, want Go's")
			}
		})
	}
}

// TestLogWakesOtherFile: a change to a file other than a log is the
// script's look, and so is the look at the timeout.
func TestLogWakesOtherFile(t *testing.T) {
	keep, quick := logWakes(t.TempDir(), 0)
	quick()
	keep("stdout.log")
	if !quick() {
		t.Errorf("a write to stdout.log: the script's look, want Go's")
	}
	if keep("ended_at.tmp") {
		t.Errorf("ended_at.tmp woke a look, want none: its rename does")
	}
	keep("exit_code")
	if quick() {
		t.Errorf("exit_code changed: Go's look, want the script's")
	}
	// Changes that came during a look wake one look (watched): a write
	// to a log after exit_code leaves that look the script's.
	keep("exit_code")
	keep("stdout.log")
	if quick() {
		t.Errorf("exit_code, then stdout.log changed: Go's look, want the script's")
	}
	_, quick = logWakes(t.TempDir(), 1)
	if quick() {
		t.Errorf("past the timeout: Go's look, want the script's")
	}
}
