package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bgjob/bgjob/termtext"
)

// clean makes log bytes into text for a model: terminal escape sequences
// removed (unless raw), and every byte that is not part of valid UTF-8
// written as \xNN, so that nothing is dropped silently.
func clean(b []byte, raw bool) string {
	s, _ := cleanMax(b, raw, -1)
	return s
}

// cleanMax is clean with a budget: it stops before the text would exceed
// max bytes (max < 0: no budget) and returns the text and how many bytes of
// b it made it from. Escaping can make text longer than its bytes (\xNN is
// four), so a read of max bytes is not always max bytes of text. The rule
// of bgjob's cap (LogOptions.MaxBytes) holds for the text too: a cut never
// splits a character (nor a \xNN), and a budget smaller than the first one
// takes it whole, at most 3 bytes over, so that every read gets on.
func cleanMax(b []byte, raw bool, max int) (string, int) {
	var sb strings.Builder
	sb.Grow(min(len(b), max+1))
	i := 0
	// Carriage returns before textCR are text: found so once for a run of
	// them, not once a byte (a long run took minutes).
	textCR := 0
	for i < len(b) {
		c := b[i]
		if !raw && (c != '\r' || i >= textCR) {
			if n := escapeLen(b[i:]); n > 0 {
				i += n
				continue
			}
			if c == '\r' {
				textCR = crTextEnd(b, i)
			}
		}
		var piece string
		n := 1
		if c < utf8.RuneSelf {
			piece = b2s(b[i : i+1])
		} else if r, size := utf8.DecodeRune(b[i:]); r == utf8.RuneError && size <= 1 {
			piece = fmt.Sprintf(`\x%02x`, c)
		} else {
			piece, n = b2s(b[i:i+size]), size
		}
		if max >= 0 && sb.Len()+len(piece) > max && (sb.Len() > 0 || max == 0) {
			break
		}
		sb.WriteString(piece)
		i += n
	}
	return sb.String(), i
}

func b2s(b []byte) string { return string(b) }

// escapeLen returns the length of the terminal escape sequence, or of the
// carriage returns before a newline, at the start of b (0: none), as
// termtext removes them (termtext.SequenceLen); a sequence cut off by the
// end of b counts whole, carriage returns there are text.
func escapeLen(b []byte) int {
	n, complete := termtext.SequenceLen(b)
	if !complete && b[0] == '\r' {
		return 0
	}
	return n
}

// crTextEnd returns the end of the carriage returns and whole escape
// sequences from b[i], a carriage return that is text: termtext looks past
// them all to decide, so every one of those carriage returns is text too.
func crTextEnd(b []byte, i int) int {
	for i < len(b) {
		if b[i] == '\r' {
			i++
			continue
		}
		if b[i] != 0x1b {
			break
		}
		n, complete := termtext.SequenceLen(b[i:])
		if !complete {
			break
		}
		i += n
	}
	return i
}

// capText cuts s to at most max bytes, at a character boundary, and says
// whether it did.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// capTail keeps at most the last max bytes of s, from a character
// boundary, and says whether it cut.
func capTail(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := len(s) - max
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:], true
}
