package bgjob

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// CompileERE compiles pattern, a POSIX extended regular expression, as
// regexp.CompilePOSIX reads it (leftmost-longest), for matching in Go in
// the dialect of WaitFor's pattern, which the host's grep -E reads: it
// refuses, wrapping ErrUsage, what grep -E would read otherwise than RE2 or
// Perl (\d, (?i), a backslash inside [...]), and what it cannot compile,
// GNU grep's \w, \s and \b among it.
func CompileERE(pattern string) (*regexp.Regexp, error) {
	if err := checkERE(pattern); err != nil {
		return nil, err
	}
	re, err := regexp.CompilePOSIX(pattern)
	var se *syntax.Error
	if errors.As(err, &se) && se.Code == syntax.ErrInvalidEscape {
		// GNU grep's \w, \s and \b, which POSIX does not have.
		return nil, fmt.Errorf("%w: in %s, %s is not POSIX extended regular expression syntax: use a class such as [[:alnum:]_] or [[:space:]]", ErrUsage, pattern, se.Expr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return re, nil
}

// CheckPattern refuses, with an error wrapping ErrUsage, a pattern that
// WaitFor (and Ready) would refuse before they look at the host: one
// with a NUL byte, which no shell can pass, or one that grep -E reads
// otherwise than RE2 or Perl would (\d, (?i), [\s]). What it lets
// through the host's grep may still refuse (one it cannot compile). A
// front end calls it to refuse a pattern before it starts a job.
func CheckPattern(pattern string) error {
	if strings.IndexByte(pattern, 0) >= 0 {
		return fmt.Errorf("%w: pattern %q holds a NUL byte, which no shell can pass", ErrUsage, pattern)
	}
	if err := checkERE(pattern); err != nil {
		return err
	}
	// What no grep -E compiles either: a ( without its ), a [ without
	// its ]. The rest is left to the host's grep, whose dialect is wider
	// than Go's (GNU's \w, back references).
	_, err := syntax.Parse(pattern, syntax.POSIX)
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrMissingParen, syntax.ErrMissingBracket:
			return fmt.Errorf("%w: pattern %q: %s, which grep -E cannot compile either", ErrUsage, pattern, se.Code)
		}
	}
	return nil
}

// checkERE refuses a pattern for grep -E that a reader used to RE2 or
// Perl (a model, or the filter of job_output) would expect to mean
// something else: grep -E reads \d as "d", \t as "t", (?i) as an error or a
// literal, and a backslash inside [...] as a backslash. Everything else is
// left to the host's grep, which reports what it cannot compile.
func checkERE(pattern string) error {
	bad := func(what, instead string) error {
		return fmt.Errorf("%w: in %s, %s (the pattern is a POSIX extended regular expression, as grep -E reads it): %s", ErrUsage, pattern, what, instead)
	}
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			if i+1 == len(pattern) {
				return nil // grep reports a trailing backslash
			}
			i++
			c := pattern[i]
			if instead, ok := perlEscapes[c]; ok {
				return bad(fmt.Sprintf(`\%c is RE2 or Perl syntax, which grep -E reads as %c`, c, c), instead)
			}
		case '(':
			if i+1 < len(pattern) && pattern[i+1] == '?' {
				return bad("(? starts an RE2 or Perl group or flag, which grep -E does not have", "write the group as (...), and match case with [Aa]")
			}
		case '[':
			end, backslash := bracketEnd(pattern, i)
			if backslash {
				return bad(`a backslash inside [...] matches a backslash in grep -E`, "use a class such as [[:digit:]] or [[:space:]], or [0-9]")
			}
			i = end
		}
	}
	return nil
}

// perlEscapes are the escapes that RE2 reads as a class or a character and
// grep -E as the letter itself, with what to write instead.
var perlEscapes = map[byte]string{
	'd': "use [0-9] or [[:digit:]]", 'D': "use [^0-9]",
	't': "use a tab character or [[:blank:]]", 'n': "a line never holds a newline: match the line's end with $",
	'r': "use [[:cntrl:]] or the character itself", 'f': "use the character itself", 'v': "use the character itself",
	'x': "use the character itself", 'p': "use a class such as [[:alpha:]]", 'P': "use a class such as [^[:alpha:]]",
	'A': "use ^", 'z': "use $", 'Q': "escape each special character with \\", 'E': "escape each special character with \\",
}

// bracketEnd returns the index of the ] that closes the bracket expression
// at pattern[i] (len(pattern) when none does) and whether a backslash is in
// it, outside [:class:], [=x=] and [.x.].
func bracketEnd(pattern string, i int) (int, bool) {
	j := i + 1
	if j < len(pattern) && pattern[j] == '^' {
		j++
	}
	if j < len(pattern) && pattern[j] == ']' {
		j++ // a ] first is part of the set
	}
	backslash := false
	for ; j < len(pattern); j++ {
		switch pattern[j] {
		case ']':
			return j, backslash
		case '\\':
			backslash = true
		case '[':
			if j+1 < len(pattern) && strings.IndexByte(":=.", pattern[j+1]) >= 0 {
				closing := string(pattern[j+1]) + "]"
				if k := strings.Index(pattern[j+2:], closing); k >= 0 {
					j += 2 + k + 1
				}
			}
		}
	}
	return len(pattern), backslash
}
