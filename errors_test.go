package bgjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/runtime/local"
)

// A refusal is an *Error of its kind whose message is the one bgjob has
// always printed; errors.Is finds its sentinel, KindOf its kind, also
// through a Fleet's host and fmt's wrapping.
func TestRefusalKinds(t *testing.T) {
	for _, tc := range []struct {
		kind, subject string
		want          Kind
		sentinel      error
		msg           string
		ref           string
	}{
		{records.ErrKindNotFound, "web", KindNotFound, ErrNotFound, "job web: not found", "web"},
		{records.ErrKindSymlink, "web", KindNotFound, ErrNotFound, "job web: not found: its directory is a symbolic link, which bgjob never follows", "web"},
		{records.ErrKindBusy, "web", KindBusy, ErrBusy, "job web: job is still running or has live processes (stop it first, or use --force)", "web"},
		{records.ErrKindEnded, "job web has ended", KindEnded, ErrEnded, "job web has ended: input not delivered", ""},
		{records.ErrKindNoPTY, "the host has no script command", KindNoPTY, ErrNoPTY, "the host has no script command: no pseudo-terminal job on this host", ""},
		{records.ErrKindNoCap, "no fallocate", KindNoLogCap, ErrNoLogCap, "no fallocate: no log size cap on this host", ""},
		{records.ErrKindCwd, "no such directory /x", KindUsage, ErrUsage, "invalid request: no such directory /x", ""},
		{records.ErrKindReadOnly, "/r/d", KindReadOnly, ErrReadOnly, "job directory /r/d cannot be changed (read-only file system or directory): read-only job directory", ""},
		{"XX", "odd", KindHost, ErrHost, "odd (XX): host failure", ""},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			err := refusal(tc.kind, tc.subject)
			if err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err, tc.msg)
			}
			var e *Error
			if !errors.As(err, &e) || e.Ref != tc.ref {
				t.Errorf("errors.As: %#v, want an *Error with Ref %q", e, tc.ref)
			}
			for _, w := range []error{err, fmt.Errorf("reading: %w", err), hostError("h1", err), errors.Join(err)} {
				if !errors.Is(w, tc.sentinel) || KindOf(w) != tc.want || !IsAnswer(w) {
					t.Errorf("%q: errors.Is %v, KindOf %q, IsAnswer %v; want true, %q, true", w, errors.Is(w, tc.sentinel), KindOf(w), IsAnswer(w), tc.want)
				}
			}
			for _, s := range []error{ErrNotFound, ErrBusy, ErrEnded, ErrNoPTY, ErrUsage, ErrHost} {
				if s != tc.sentinel && errors.Is(err, s) {
					t.Errorf("%q is %q too", err, s)
				}
			}
		})
	}
}

// A failure that is no answer of the host has no kind, and a Fleet's
// host prefixes its message once.
func TestNoAnswerKinds(t *testing.T) {
	transit := errors.New("ssh h1: connection lost")
	noAnswer := fmt.Errorf("%w within 1s", ErrNoAnswer)
	for _, tc := range []struct {
		err    error
		kind   Kind
		answer bool
	}{
		{transit, KindOther, false},
		{hostError("h1", transit), KindOther, false},
		{context.Canceled, KindOther, false},
		{noAnswer, KindNoAnswer, false},
		{hostError("h1", noAnswer), KindNoAnswer, false},
	} {
		if KindOf(tc.err) != tc.kind || IsAnswer(tc.err) != tc.answer {
			t.Errorf("%q: KindOf %q, IsAnswer %v; want %q, %v", tc.err, KindOf(tc.err), IsAnswer(tc.err), tc.kind, tc.answer)
		}
	}
	if got, want := hostError("h1", noAnswer).Error(), "h1: no answer within 1s"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	// Within's error names its host already.
	named := &Error{Kind: KindNoAnswer, Host: "h1", Err: noAnswer}
	if got, want := hostError("h1", named).Error(), "h1: no answer within 1s"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got, want := hostError("h1", refusal(records.ErrKindNotFound, "web")).Error(), "h1: job web: not found"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// A job not found says the workspace it was looked for in, as the Error's
// Workspace and in its message, whichever verb looked.
func TestNotFoundNamesTheWorkspace(t *testing.T) {
	c, err := NewClient(local.New(), t.TempDir(), "ws1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, serr := c.Status(ctx, "nosuch")
	_, lerr := c.Logs(ctx, "nosuch", LogOptions{}, io.Discard, io.Discard)
	_, werr := c.Wait(ctx, []string{"nosuch"}, WaitOptions{})
	for verb, err := range map[string]error{"status": serr, "logs": lerr, "wait": werr} {
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindNotFound || e.Ref != "nosuch" || e.Workspace != "ws1" {
			t.Errorf("%s: err = %#v, want not found of nosuch in ws1", verb, err)
			continue
		}
		if got, want := err.Error(), "job nosuch: not found in workspace ws1"; got != want {
			t.Errorf("%s: %q, want %q", verb, got, want)
		}
	}
}
