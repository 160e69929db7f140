package bgjob_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// On this machine WaitFor lets Go's reading of the pattern decide when
// the script looks; the script alone matches. A line that grep -E in the
// C locale matches and Go does not (two bytes of one é for "^..$") is
// still found, by the script's next look; so is a line both match, and a
// line written after others that do not match.
func TestWaitForLocalFindsWhatGrepFinds(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ cmd, pattern, want string }{
		{`i=0; while [ $i -lt 20 ]; do echo "line $i"; i=$((i+1)); sleep 0.02; done; echo READY; sleep 60`, "^READY$", "READY\n"},
		{`sleep 0.3; echo x; printf '\303\251\n'; sleep 60`, "^..$", "\u00e9\n"},
	} {
		j, err := c.Run(ctx, bgjob.Spec{Argv: []string{tc.cmd}})
		if err != nil {
			t.Fatal(err)
		}
		_, m, err := c.WaitFor(ctx, j.ID, tc.pattern, bgjob.WaitForOptions{Timeout: time.Minute})
		if err != nil || string(m.Line) != tc.want {
			t.Errorf("WaitFor %q: %q, %v; want %q", tc.pattern, m.Line, err, tc.want)
		}
		c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
	}
}

// The look at the timeout is the script's: a line Go's reading of the
// pattern misses, written 2 s before a 2.5 s timeout, is the match,
// not a timeout (the tick's script would have come after it).
func TestWaitForLocalLastLookIsTheScripts(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{`sleep 0.5; printf '\303\251\n'; sleep 60`}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
	_, m, err := c.WaitFor(ctx, j.ID, "^..$", bgjob.WaitForOptions{Timeout: 2500 * time.Millisecond})
	if err != nil || string(m.Line) != "\u00e9\n" {
		t.Errorf("WaitFor ^..$ within 2.5 s: %q, %v; want the line é", m.Line, err)
	}
}

// A wait for a line on this machine ends at its timeout, however long its
// looks take (a log that floods, a grep that takes exponential time on a
// long line): a look the deadline falls in is the look at the timeout,
// and the error says that the wait timed out, not that a host did not
// answer (there is none).
func TestWaitForLocalSlowLookTimesOut(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ name, cmd, pattern string }{
		{"flood", `yes a-line-of-a-job-that-floods-its-log`, "^never$"},
		{"slow grep", `head -c 4000 /dev/zero | tr '\0' a; echo; sleep 600`, `^(a|a?)+\1$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := c.Run(ctx, bgjob.Spec{Argv: []string{tc.cmd}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Remove(ctx, []string{j.ID}, bgjob.RemoveOptions{Force: true})
			_, _, err = c.WaitFor(ctx, j.ID, tc.pattern, bgjob.WaitForOptions{Timeout: 2 * time.Second, Since: time.Now()})
			if want := fmt.Sprintf("waiting 2s for %q: timed out", tc.pattern); !errors.Is(err, bgjob.ErrTimeout) || err.Error() != want {
				t.Errorf("WaitFor: %v; want %q", err, want)
			}
		})
	}
}
