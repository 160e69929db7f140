package bgjob_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// A pattern that grep -E reads otherwise than RE2 would is refused before
// the wait: \d+ waited for a "d" and timed out on a job printing digits.
func TestWaitForRefusesRE2Syntax(t *testing.T) {
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"echo 'listening on 8080, [ok]'"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pattern string
		refused       bool
	}{
		{"perl digit", `on \d+`, true},
		{"perl tab", `on\t8080`, true},
		{"inline flag", `(?i)LISTENING`, true},
		{"non-capturing group", `(?:on) 8080`, true},
		{"backslash in brackets", `on [\d]+`, true},
		{"escaped bracket in brackets", `[\]]`, true},
		{"posix class", `on [[:digit:]]+`, false},
		{"range", `on [0-9]+`, false},
		{"escaped metacharacter", `\[ok\]`, false},
		{"bracket first in set", `[]o]k`, false},
		{"alternation", `ready|listening`, false},
		{"gnu word escape", `\w+ing`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.WaitFor(ctx, j.ID, tc.pattern, bgjob.WaitForOptions{Timeout: time.Minute})
			if got := errors.Is(err, bgjob.ErrUsage); got != tc.refused {
				t.Fatalf("WaitFor(%q): %v, want refused %v", tc.pattern, err, tc.refused)
			}
			if !tc.refused && err != nil {
				t.Fatalf("WaitFor(%q): %v", tc.pattern, err)
			}
		})
	}
}

// CompileERE reads a pattern as WaitFor does, leftmost-longest, and
// refuses what grep -E reads otherwise than RE2.
func TestCompileERE(t *testing.T) {
	re, err := bgjob.CompileERE(`on [[:digit:]]+|on`)
	if err != nil {
		t.Fatal(err)
	}
	if got := re.FindString("listening on 8080"); got != "on 8080" {
		t.Errorf("match %q, want the longest, %q", got, "on 8080")
	}
	for _, p := range []string{`on \d+`, `(?i)on`, `[\s]`, `(`, `\w+`} {
		if _, err := bgjob.CompileERE(p); !errors.Is(err, bgjob.ErrUsage) {
			t.Errorf("CompileERE(%q): %v, want ErrUsage", p, err)
		}
	}
	if _, err := bgjob.CompileERE(`\s`); err == nil || !strings.Contains(err.Error(), "[[:space:]]") {
		t.Errorf("CompileERE(\\s): %v, want what to write instead", err)
	}
}

// TestCheckPatternRefusesWhatGrepCannotCompile: a ( without its ) or a [
// without its ] is refused before a job starts (run --ready, ready_output);
// what GNU grep -E reads, a lone ) among it, is left to it.
func TestCheckPatternRefusesWhatGrepCannotCompile(t *testing.T) {
	for _, p := range []string{"(", "a(b", "a[b", "[[:digit:]"} {
		if err := bgjob.CheckPattern(p); !errors.Is(err, bgjob.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", p, err)
		}
	}
	for _, p := range []string{"a)", "x(y|z)", "[[:digit:]]+", "a{2}", `\w+`, "(a)\\1"} {
		if err := bgjob.CheckPattern(p); err != nil {
			t.Errorf("%q: %v, want it left to grep", p, err)
		}
	}
}
