package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// clean makes log bytes into text for a model: terminal escape sequences
// removed (unless raw), and every byte that is not part of valid UTF-8
// written as \xNN, so that nothing is dropped silently.
func clean(b []byte, raw bool) string {
	if !raw {
		b = stripANSI(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&sb, `\x%02x`, b[0])
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

// stripANSI removes ECMA-48 escape sequences: CSI (ESC [ … final byte),
// OSC, DCS and the like (ESC ] … BEL or ESC \), and two-byte escapes. A
// carriage return before a newline is dropped too.
func stripANSI(b []byte) []byte {
	if !containsAny(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
			continue
		case c != 0x1b:
			out = append(out, c)
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
		case ']', 'P', '_', '^', 'X':
			j := i + 2
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func containsAny(b []byte) bool {
	for _, c := range b {
		if c == 0x1b || c == '\r' {
			return true
		}
	}
	return false
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

// lastLines returns the last n lines of s (a last line without a newline
// counts).
func lastLines(s string, n int) string {
	t := strings.TrimSuffix(s, "\n")
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] == '\n' {
			n--
			if n == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}
