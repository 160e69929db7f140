package cli

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/tui"
)

// Each help file is a verb's (help/bgjob.txt bgjob's own), and what it
// says is what the command shows.
func TestHelpFiles(t *testing.T) {
	root := Command()
	cmds := map[string]bool{"bgjob": true}
	for _, c := range root.Commands() {
		cmds[c.Name()] = true
	}
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	for _, f := range files {
		verb := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		if !cmds[verb] {
			t.Errorf("%s: no verb %s", f, verb)
			continue
		}
		long, example := help(verb)
		if long == "" || strings.HasSuffix(long, "\n") || strings.HasSuffix(example, "\n") {
			t.Errorf("%s: long help %q…, examples %q…: want a text, neither ending in a newline", f, first(long), first(example))
		}
	}
}

// attach's help says how much of a job's output it replays: as much as
// it does.
func TestAttachHelpReplay(t *testing.T) {
	long, _ := help("attach")
	for _, want := range []string{
		fmt.Sprintf("the last %d lines", tui.AttachReplay),
		fmt.Sprintf("(at most %d KiB)", tui.AttachReplayBytes>>10),
	} {
		if !strings.Contains(strings.Join(strings.Fields(long), " "), want) {
			t.Errorf("attach's help does not say %q", want)
		}
	}
}

// first returns the first line of s.
func first(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
