// Package termtext turns what a program wrote to a terminal into plain
// text: it removes the terminal's escape sequences and the carriage
// returns of line ends. bgjob uses it for the output of PTY jobs
// (logs --plain) and wherever log text is shown to a model.
//
// Removed are the escape sequences of ECMA-48 and the VT100: CSI (ESC [
// parameters, intermediates, a final byte: colours, cursor motion,
// erasing), the strings OSC, DCS, SOS, PM and APC (ESC ] ... up to BEL or
// ESC \: window titles, hyperlinks), and the other escapes (ESC, optional
// intermediates, a final byte: charset selects such as ESC ( B, keypad
// modes such as ESC =). CAN or SUB abandons a sequence, as a terminal
// does. Carriage returns directly before a newline are dropped, so
// "\r\n" becomes "\n"; a lone "\r" (a progress bar redrawing its line)
// and every other byte, valid UTF-8 or not, are kept. A sequence that
// is cut off (by a control byte or by the end of the input) is dropped
// up to where it was cut.
package termtext

import "io"

// state is where the scanner is in a sequence.
type state uint8

const (
	ground   state = iota // text
	esc                   // after ESC
	escInter              // after ESC and intermediates (0x20-0x2f)
	csi                   // after ESC [
	str                   // in an OSC, DCS, SOS, PM or APC string
	strEsc                // in such a string, after ESC
)

const (
	bel     = 0x07
	can     = 0x18
	sub     = 0x1a
	escByte = 0x1b
)

// scanner holds the state between pieces of a stream: inside a sequence,
// or after carriage returns that may end a line.
type scanner struct {
	st  state
	crs int // carriage returns held back in ground
}

// add appends the text of b to out and returns it.
func (s *scanner) add(out, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch s.st {
		case ground:
			switch c {
			case '\r':
				s.crs++
				continue
			case '\n':
				s.crs = 0
			case escByte:
				// Carriage returns stay held across a sequence:
				// "\r\x1b[0m\n" ends a line too.
				s.st = esc
				continue
			}
			out = append(s.flushCR(out), c)
		case esc:
			switch {
			case c == '[':
				s.st = csi
			case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
				s.st = str
			case c >= 0x20 && c <= 0x2f:
				s.st = escInter
			case c >= 0x30 && c <= 0x7e:
				s.st = ground
			case c == escByte:
			case c == can || c == sub:
				s.st = ground
			default:
				s.st = ground
				i-- // not a sequence: the byte is text
			}
		case escInter:
			switch {
			case c >= 0x20 && c <= 0x2f:
			case c >= 0x30 && c <= 0x7e, c == can, c == sub:
				s.st = ground
			case c == escByte:
				s.st = esc
			default:
				s.st = ground
				i--
			}
		case csi:
			switch {
			case c >= 0x20 && c <= 0x3f:
			case c >= 0x40 && c <= 0x7e, c == can, c == sub:
				s.st = ground
			case c == escByte:
				s.st = esc
			default:
				s.st = ground
				i--
			}
		case str:
			switch c {
			case bel, can, sub:
				s.st = ground
			case escByte:
				s.st = strEsc
			}
		case strEsc:
			if c == '\\' {
				s.st = ground
			} else {
				// ESC ends the string and starts a sequence of its own.
				s.st = esc
				i--
			}
		}
	}
	return out
}

// flushCR appends the carriage returns held back: no newline followed them.
func (s *scanner) flushCR(out []byte) []byte {
	for ; s.crs > 0; s.crs-- {
		out = append(out, '\r')
	}
	return out
}

// Strip returns b without terminal escape sequences and with "\r\n" as
// "\n" (see the package comment). It returns b itself when there is
// nothing to remove.
func Strip(b []byte) []byte {
	clean := true
	for _, c := range b {
		if c == escByte || c == '\r' {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	var s scanner
	return s.flushCR(s.add(make([]byte, 0, len(b)), b))
}

// Writer strips what is written to it (see Strip) and writes the text to
// an underlying writer: a sequence or line end split between two writes is
// recognised all the same. Close writes what it held back (carriage
// returns at the very end); it does not close the underlying writer.
type Writer struct {
	w   io.Writer
	s   scanner
	buf []byte
}

// NewWriter returns a Writer that writes the text of its input to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write strips p and writes the text. It reports len(p) when the text was
// written in full.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = w.s.add(w.buf[:0], p)
	if len(w.buf) == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes the carriage returns held back at the end of the input.
func (w *Writer) Close() error {
	w.buf = w.s.flushCR(w.buf[:0])
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}
