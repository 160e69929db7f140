package shellgen_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/shellgen"
)

// allBytes is every byte but NUL, in order.
func allBytes() string {
	var b strings.Builder
	for c := 1; c < 256; c++ {
		b.WriteByte(byte(c))
	}
	return b.String()
}

// trickyWords are words a quoter is likely to get wrong.
func trickyWords() []string {
	words := []string{
		"", "a", "plain-word_1.2/x:y@z%+,", "two words", " ", "  lead", "trail  ",
		"'", "''", "it's", `"`, `"double"`, `\`, `\\`, `a\'b`, `'\''`,
		"\n", "line1\nline2", "trailing\n\n", "\r\n", "\t",
		"-", "-n", "-e", "--", "--help", "-n\n",
		"=", "a=b", "PATH=/x", "=b",
		"*", "?", "[a-z]", "[", "]", "{a,b}", "{}", "~", "~root", "a~",
		"$", "$HOME", "${HOME}", "$(id)", "`id`", "$((1+1))", "!", "!!", "#", "a#b", "&", ";", "|", "<", ">", "(", ")",
		"%s%d%%", "\\0", "\\n",
		"if", "then", "fi", "done", "time", "{", "}",
		"@@bgjob-end@@", "\n@@bgjob-end@@\n",
		"\xff\xfe", "\x80", "caf\u00e9", "\u2028\u2029", "日本語",
		allBytes(),
	}
	for c := 1; c < 256; c++ {
		words = append(words, string([]byte{byte(c)}))
	}
	return words
}

func TestQuoteNUL(t *testing.T) {
	tests := []struct {
		name string
		argv []string
	}{
		{"only NUL", []string{"\x00"}},
		{"inner NUL", []string{"a\x00b"}},
		{"trailing NUL", []string{"abc\x00"}},
		{"NUL in a later word", []string{"printf", "%s", "x\x00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := tt.argv[len(tt.argv)-1]
			if q, err := shellgen.Quote(last); !errors.Is(err, shellgen.ErrNUL) || q != "" {
				t.Errorf("Quote(%q) = %q, %v; want ErrNUL", last, q, err)
			}
			if q, err := shellgen.QuoteArgv(tt.argv); !errors.Is(err, shellgen.ErrNUL) || q != "" {
				t.Errorf("QuoteArgv(%q) = %q, %v; want ErrNUL", tt.argv, q, err)
			}
		})
	}
}

// TestQuoteRoundTrip has each shell print the quoted words back with
// printf '%s\0' and checks that every byte arrives unchanged.
func TestQuoteRoundTrip(t *testing.T) {
	words := trickyWords()
	var want bytes.Buffer
	for _, w := range words {
		want.WriteString(w)
		want.WriteByte(0)
	}
	quoted, err := shellgen.QuoteArgv(words)
	if err != nil {
		t.Fatal(err)
	}
	// Each word on its own, too, so that one word cannot mask another.
	var one []string
	for _, w := range words {
		q, err := shellgen.Quote(w)
		if err != nil {
			t.Fatalf("Quote(%q): %v", w, err)
		}
		one = append(one, q)
	}
	scripts := []struct{ name, script string }{
		{"QuoteArgv", "printf '%s\\0' " + quoted},
		{"Quote", "printf '%s\\0' " + strings.Join(one, " ")},
		// Across lines: a quoted word must not swallow what follows.
		{"Quote per line", "for w in " + strings.Join(one, " \\\n") + "\ndo printf '%s\\0' \"$w\"; done"},
	}
	for _, sh := range allShells {
		for _, sc := range scripts {
			t.Run(sh.name+"/"+sc.name, func(t *testing.T) {
				cmd := sh.command(t, "-c", sc.script)
				cmd.Dir = t.TempDir() // globs would match nothing, but be sure
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				got, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr.Bytes())
				}
				if diff := cmp.Diff(split0(want.Bytes()), split0(got)); diff != "" {
					t.Errorf("words changed (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func split0(b []byte) []string {
	return strings.Split(string(b), "\x00")
}

// TestQuoteArgvFirstWord checks that a quoted argv runs its first word as
// a command, whatever it looks like: not as an assignment, a keyword or a
// pattern. Each argv names a command that does not exist, so the shell
// must report 127, and must not run the words after it.
func TestQuoteArgvFirstWord(t *testing.T) {
	tests := []struct {
		name string
		argv []string
	}{
		{"assignment", []string{"BGJOB_X=1", "printf", "ran"}},
		{"bare equals", []string{"=", "printf", "ran"}},
		{"keyword if", []string{"if", "printf", "ran"}},
		{"keyword then", []string{"then", "printf", "ran"}},
		{"keyword for", []string{"for", "printf", "ran"}},
		{"keyword while", []string{"while", "printf", "ran"}},
		{"keyword case", []string{"case", "printf", "ran"}},
		{"keyword done", []string{"done"}},
		{"keyword in", []string{"in"}},
		{"bash keyword time", []string{"time", "printf", "ran"}},
		{"bash keyword function", []string{"function"}},
		{"bang", []string{"!", "printf", "ran"}},
		{"brace", []string{"{", "printf", "ran"}},
		{"glob", []string{"*"}},
		{"tilde", []string{"~"}},
		{"dash", []string{"-n", "printf", "ran"}},
		{"space", []string{"printf ran"}},
	}
	for _, sh := range allShells {
		for _, tt := range tests {
			t.Run(sh.name+"/"+tt.name, func(t *testing.T) {
				q, err := shellgen.QuoteArgv(tt.argv)
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				// After a first line, so that a leading dash is not taken
				// for an option of sh -c.
				cmd := sh.command(t, "-c", ":\n"+q)
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + dir, "HOME=" + dir}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 127 || len(out) > 0 {
					t.Errorf("%s -c %s: %v, stdout %q; want exit status 127 (not found)\n%s", sh.name, q, err, out, stderr.Bytes())
				}
			})
		}
	}
}
