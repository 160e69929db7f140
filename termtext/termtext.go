// Package termtext turns what a program wrote to a terminal into plain
// text: it removes the terminal's escape sequences and the carriage
// returns of line ends. bgjob uses it for the output of PTY jobs
// (logs --plain) and for the log text the MCP server gives a model.
//
// Removed are the escape sequences of ECMA-48 and the VT100: CSI (ESC [
// parameters, intermediates, a final byte: colours, cursor motion,
// erasing), the strings OSC, DCS, SOS, PM and APC (ESC ] ... up to BEL or
// ESC \: window titles, hyperlinks; one that is not terminated ends before
// a newline or after MaxString bytes, so that a stray opener hides at most
// the rest of its line), and the other escapes (ESC, optional
// intermediates, a final byte: charset selects such as ESC ( B, keypad
// modes such as ESC =). CAN or SUB abandons a sequence, as a terminal
// does; another control byte ends it and stays. Carriage returns before a
// newline are dropped (with any sequence between them), so "\r\n" becomes
// "\n"; a lone "\r" (a progress bar redrawing its line) and every other
// byte, valid UTF-8 or not, are kept. A sequence cut off by the end of the
// input is dropped.
package termtext

import "io"

const (
	bel     = 0x07
	can     = 0x18
	sub     = 0x1a
	escByte = 0x1b
)

// SequenceLen returns the length of what Strip removes at the start of b:
// an escape sequence, or carriage returns before a newline (with the
// sequences between them, but not the newline); 0 when b starts with text.
// complete is false when b ends before the sequence does, or with carriage
// returns that a newline may follow: a stream holds those bytes back until
// more arrive.
func SequenceLen(b []byte) (n int, complete bool) {
	n, complete, _ = sequenceLen(b, 0)
	return n, complete
}

// MaxString bounds a string (OSC, DCS, SOS, PM, APC) that is not
// terminated: it ends after MaxString bytes, as it ends at a newline, and
// what follows is text. A stray opener (a program killed while it set a
// title) then hides the rest of its line at most, not the rest of the log.
// 8 KiB lets through the 4 KiB chunks of kitty's graphics protocol.
const MaxString = 8 << 10

// sequenceLen is SequenceLen, and where its look-ahead over carriage
// returns stopped when they are text (n is 0, or they are cut off by the
// end of b): up to there b holds carriage returns and escape sequences
// only, the last one perhaps cut off. A caller handles those bytes at
// once, so that a long run of them is looked at once, not once a byte.
//
// A string at the start of b has had seen bytes before b (a Writer
// drops what it has looked at of an unfinished string).
func sequenceLen(b []byte, seen int) (n int, complete bool, end int) {
	if len(b) == 0 {
		return 0, true, 0
	}
	switch b[0] {
	case escByte:
		n, complete = escLen(b, seen)
		return n, complete, 0
	case '\r':
		i := 0
		for {
			for i < len(b) && b[i] == '\r' {
				i++
			}
			if i == len(b) {
				return i, false, i
			}
			if b[i] == '\n' {
				return i, true, 0
			}
			if b[i] != escByte {
				return 0, true, i
			}
			n, ok := escLen(b[i:], 0)
			if !ok {
				return i + n, false, i + n
			}
			i += n
		}
	}
	return 0, true, 0
}

// escLen is SequenceLen of b, which starts with ESC; a string there has
// had seen bytes before b.
func escLen(b []byte, seen int) (int, bool) {
	if len(b) == 1 {
		return 1, false
	}
	c := b[1]
	switch {
	case c == '[':
		return scan(b, 2, 0x20, 0x3f, 0x40, 0x7e)
	case isString(c):
		for j := 2; j < len(b); j++ {
			switch b[j] {
			case '\n':
				// The newline is text: a string never hides a line end.
				return j, true
			case bel, can, sub:
				return j + 1, true
			case escByte:
				if j+1 == len(b) {
					return j + 1, false
				}
				if b[j+1] == '\\' {
					return j + 2, true
				}
				// ESC ends the string and starts a sequence of its own.
				return j, true
			}
			if seen+j >= MaxString {
				return j, true
			}
		}
		return len(b), false
	case c >= 0x20 && c <= 0x2f:
		return scan(b, 2, 0x20, 0x2f, 0x30, 0x7e)
	case c >= 0x30 && c <= 0x7e, c == can, c == sub:
		return 2, true
	}
	// ESC ESC, or ESC and a byte that starts no sequence: the ESC alone.
	return 1, true
}

// isString says whether ESC c starts a string: OSC, DCS, SOS, PM or APC.
func isString(c byte) bool {
	return c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_'
}

// scan returns the end of a sequence whose bytes from b[j] are in [inLo,
// inHi] up to a final byte in [finLo, finHi]. CAN or SUB abandons it (and
// goes with it); another byte ends it and is not part of it.
func scan(b []byte, j int, inLo, inHi, finLo, finHi byte) (int, bool) {
	for ; j < len(b); j++ {
		c := b[j]
		switch {
		case c >= inLo && c <= inHi:
		case c >= finLo && c <= finHi, c == can, c == sub:
			return j + 1, true
		default:
			return j, true
		}
	}
	return len(b), false
}

// Strip returns b without terminal escape sequences and with "\r\n" as
// "\n" (see the package comment). It returns b itself when there is
// nothing to remove.
func Strip(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] != escByte && b[i] != '\r' {
		i++
	}
	if i == len(b) {
		return b
	}
	out, _ := strip(make([]byte, 0, len(b)), b, true, 0)
	return out
}

// strip appends the text of b to out and returns it with how many bytes
// of b it used: all of them at the end of the input (final), else all but
// an unfinished sequence or carriage returns at the end. A string at the
// start of b has had seen bytes before b.
func strip(out, b []byte, final bool, seen int) ([]byte, int) {
	i := 0
	for i < len(b) {
		c := b[i]
		if c != escByte && c != '\r' {
			out = append(out, c)
			i++
			continue
		}
		s := 0
		if i == 0 {
			s = seen
		}
		n, complete, end := sequenceLen(b[i:], s)
		if !complete && !final {
			return out, i
		}
		if c == '\r' && (n == 0 || !complete) {
			// Text: carriage returns no newline follows, here or at the
			// end of the input; the sequences between them go.
			for j := i; j < i+end; {
				if b[j] == '\r' {
					out = append(out, '\r')
					j++
					continue
				}
				m, _ := escLen(b[j:], 0)
				j += m
			}
			i += end
			continue
		}
		i += n
	}
	return out, i
}

// Writer strips what is written to it (see Strip) and writes the text to
// an underlying writer: a sequence or line end split between two writes is
// recognised all the same. An unfinished string is not held whole: the
// memory a Writer uses does not grow with it. Close writes what it held back (carriage
// returns at the very end); it does not close the underlying writer.
type Writer struct {
	w       io.Writer
	pending []byte
	seen    int // bytes dropped of the unfinished string pending starts
	out     []byte
}

// NewWriter returns a Writer that writes the text of its input to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write strips p and writes the text. It reports len(p) when the text was
// written in full.
func (w *Writer) Write(p []byte) (int, error) {
	b := p
	if len(w.pending) > 0 {
		b = append(w.pending, p...)
	}
	var used int
	w.out, used = strip(w.out[:0], b, false, w.seen)
	rest := b[used:]
	seen := 0
	if used == 0 {
		seen = w.seen // the same string goes on
	}
	if len(rest) > 3 && rest[0] == escByte && isString(rest[1]) {
		// An unfinished string (a title, a hyperlink's target) goes
		// whatever it holds: only its start, its length (for MaxString),
		// and an ESC at its end that may be the start of its terminator,
		// matter. So a string is looked at once.
		keep := append(rest[:2:2], rest[len(rest)-1])
		if keep[2] != escByte {
			keep = keep[:2]
		}
		seen += len(rest) - len(keep)
		rest = keep
	}
	w.pending, w.seen = append(w.pending[:0:0], rest...), seen
	if len(w.out) > 0 {
		if _, err := w.w.Write(w.out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close writes the text of what it held back: carriage returns at the end
// of the input (an unfinished sequence is dropped).
func (w *Writer) Close() error {
	w.out, _ = strip(w.out[:0], w.pending, true, w.seen)
	w.pending, w.seen = nil, 0
	if len(w.out) == 0 {
		return nil
	}
	_, err := w.w.Write(w.out)
	return err
}
