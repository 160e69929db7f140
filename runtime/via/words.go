package via

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCommand is wrapped by the errors of a via command that cannot be
// split into words.
var ErrCommand = errors.New("bad via command")

// Split splits command into words as a POSIX shell splits a simple
// command without expansions: blanks separate words; 'single quotes' keep
// everything up to the next one; "double quotes" keep everything but \",
// \\, \$ and \` (a backslash before anything else stays), and a backslash
// outside quotes keeps the next character. What a shell would expand or
// treat as an operator ($, `, |, &, ;, <, >, (, ), unquoted) is refused,
// since no shell runs the command: quote it to mean it literally.
func Split(command string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(command[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("%w: %q: unterminated single quote", ErrCommand, command)
			}
			w.WriteString(command[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			n, err := doubleQuoted(command, i+1, &w)
			if err != nil {
				return nil, err
			}
			i = n
			inWord = true
		case c == '\\':
			if i+1 == len(command) {
				return nil, fmt.Errorf("%w: %q: ends with a backslash", ErrCommand, command)
			}
			i++
			if command[i] != '\n' {
				w.WriteByte(command[i])
				inWord = true
			}
		case strings.IndexByte("$`|&;<>()", c) >= 0:
			return nil, fmt.Errorf("%w: %q: a shell would read %q, and no shell runs the command: quote it", ErrCommand, command, c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrCommand)
	}
	return words, nil
}

// doubleQuoted appends to w the double-quoted text of command that starts
// at i, and returns the index of its closing quote.
func doubleQuoted(command string, i int, w *strings.Builder) (int, error) {
	for ; i < len(command); i++ {
		switch c := command[i]; {
		case c == '"':
			return i, nil
		case c == '\\' && i+1 < len(command) && strings.IndexByte("\"\\$`", command[i+1]) >= 0:
			i++
			w.WriteByte(command[i])
		case c == '\\' && i+1 < len(command) && command[i+1] == '\n':
			i++
		case c == '$' || c == '`':
			return 0, fmt.Errorf("%w: %q: %q expands in a shell, and no shell runs the command: escape it", ErrCommand, command, c)
		default:
			w.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("%w: %q: unterminated double quote", ErrCommand, command)
}

// Expand returns the words of command for host: each %h is the host's
// name and %% a per cent sign; with no %h in any word the host's name is
// one more word, the last.
func Expand(words []string, host string) ([]string, error) {
	out := make([]string, 0, len(words)+1)
	named := false
	for _, w := range words {
		var b strings.Builder
		for i := 0; i < len(w); i++ {
			if w[i] != '%' {
				b.WriteByte(w[i])
				continue
			}
			if i+1 == len(w) {
				return nil, fmt.Errorf("%w: %q: a %% ends the word: write %%%% for a per cent sign", ErrCommand, w)
			}
			i++
			switch w[i] {
			case 'h':
				b.WriteString(host)
				named = true
			case '%':
				b.WriteByte('%')
			default:
				return nil, fmt.Errorf("%w: %q: unknown token %%%c: %%h is the host, %%%% a per cent sign", ErrCommand, w, w[i])
			}
		}
		out = append(out, b.String())
	}
	if !named {
		out = append(out, host)
	}
	return out, nil
}
