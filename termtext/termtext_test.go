package termtext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestStrip(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"doubled cr", "a\r\r\nb", "a\nb"},
		{"lone cr kept", "10%\r20%\r\n", "10%\r20%\n"},
		{"trailing cr", "a\r", "a\r"},
		{"sgr", "a\x1b[31mred\x1b[0m b", "ared b"},
		{"csi params and intermediates", "\x1b[?2004h\x1b[2J\x1b[1;1H\x1b[0 qx", "x"},
		{"cr held across a sequence", "done\r\x1b[0m\n", "done\n"},
		{"progress redraw", "50%\r\x1b[K100%\r\n", "50%\r100%\n"},
		{"osc bel", "\x1b]0;title\x07text", "text"},
		{"osc st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\.", "link."},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\x", "x"},
		{"charset select", "\x1b(B\x1b)0ab\x1b(0q\x1b(B", "abq"},
		{"two-byte escapes", "\x1b=\x1b>\x1b7x\x1b8\x1bM", "x"},
		{"esc esc", "\x1b\x1b[31mx", "x"},
		{"can aborts", "\x1b[31\x18x", "x"},
		{"control byte ends a csi", "\x1b[3\nx", "\nx"},
		{"cut at the end", "x\x1b[3", "x"},
		{"cut osc", "x\x1b]0;ti", "x"},
		{"utf-8 and invalid bytes", "é\xff\x1b[1m€", "é\xff€"},
		{"esc before a non-sequence byte", "\x1b\x01x", "\x01x"},
		{"esc ends an unterminated string", "\x1b]0;t\x1b[31mx", "x"},
		{"newline ends an unterminated string", "a\x1b]0;t\nb", "a\nb"},
		{"cr lf ends an unterminated string", "\x1b]0;t\r\nb", "\nb"},
		{"newline ends a dcs", "\x1bPq#0\n\x1bPq\x1b\\x", "\nx"},
		{"bel outside a string kept", "a\x07b", "a\x07b"},
		{"cr then a cut sequence at the end", "a\r\x1b[3", "a\r"},
		{"crs and sequences before a newline", "a\r\x1b[K\r\n", "a\n"},
		{"crs and sequences before text", "a\r\r\x1b[K\rb\r\x1b[K", "a\r\r\rb\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Strip([]byte(tc.in))); got != tc.want {
				t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// Written in pieces of every size, the text is the same.
			for n := 1; n <= len(tc.in); n++ {
				var b bytes.Buffer
				w := NewWriter(&b)
				for i := 0; i < len(tc.in); i += n {
					j := min(i+n, len(tc.in))
					if k, err := w.Write([]byte(tc.in[i:j])); err != nil || k != j-i {
						t.Fatalf("Write: %d, %v", k, err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if b.String() != tc.want {
					t.Errorf("in pieces of %d: %q, want %q", n, b.String(), tc.want)
				}
			}
		})
	}
}

// A long run of carriage returns and sequences that text follows is
// looked at once, not once a byte: 4 MiB of it took hours when each
// carriage return looked ahead to the text again.
func TestStripLongCarriageReturnRuns(t *testing.T) {
	for _, unit := range []string{"\r", "\r\x1b[K"} {
		in := append(bytes.Repeat([]byte(unit), (4<<20)/len(unit)), 'x')
		done := make(chan []byte, 1)
		go func() { done <- Strip(in) }()
		select {
		case out := <-done:
			want := strings.Repeat("\r", (4<<20)/len(unit)) + "x"
			if string(out) != want {
				t.Errorf("Strip of %q runs: %d bytes, want %d", unit, len(out), len(want))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("Strip of 4 MiB of %q and a byte of text took more than 30s", unit)
		}
	}
}

// A string that is not ended (an OSC with no BEL yet) is not kept whole
// while a Writer waits for its end: it could be megabytes.
func TestWriterLongString(t *testing.T) {
	chunk := bytes.Repeat([]byte("title "), 1<<10)
	for _, end := range []string{"\x07", "\x1b\\"} {
		for _, size := range []int{MaxString - 100, 6 << 20} {
			in := []byte("start\x1b]0;")
			var b bytes.Buffer
			w := NewWriter(&b)
			w.Write(in)
			for n := 0; n < size; n += len(chunk) {
				c := chunk[:min(len(chunk), size-n)]
				in = append(in, c...)
				w.Write(c)
				if len(w.pending) > 3 {
					t.Fatalf("the Writer holds %d bytes of an unfinished string", len(w.pending))
				}
			}
			// The terminator split between two writes.
			w.Write([]byte(end[:1]))
			w.Write([]byte(end[1:] + "end\n"))
			w.Close()
			in = append(in, end+"end\n"...)
			if want := string(Strip(in)); b.String() != want {
				t.Errorf("a string of %d ended with %q: %d bytes, Strip gives %d", size, end, b.Len(), len(want))
			}
			if size < MaxString && b.String() != "startend\n" {
				t.Errorf("a string of %d ended with %q: %q, want %q", size, end, b.String(), "startend\n")
			}
		}
	}
}

// A stray string opener (a program killed while it set its title) hides
// at most the rest of its line, or MaxString bytes: the error at the end
// of the log is text.
func TestStrayStringOpener(t *testing.T) {
	var seq strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	lines := seq.String()
	noNewline := strings.Repeat("x", 3*MaxString)
	for _, tc := range []struct{ name, in, want string }{
		{"osc", "before\n\x1b]0;stray " + lines + "ERROR: build failed\n", "before\n" + lines[1:] + "ERROR: build failed\n"},
		{"dcs", "\x1bPq#0;2" + lines, lines[1:]},
		{"apc", "\x1b_Gm=1;AAAA\r\nnext\n", "\nnext\n"},
		{"no newline", "a\x1b]" + noNewline + "\rERROR", "a" + noNewline[MaxString-2:] + "\rERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Strip([]byte(tc.in))); got != tc.want {
				t.Errorf("Strip: %d bytes %.80q..., want %d bytes %.80q...", len(got), got, len(tc.want), tc.want)
			}
			for _, n := range []int{1, 7, 1000, MaxString - 1, MaxString + 1} {
				var b bytes.Buffer
				w := NewWriter(&b)
				for i := 0; i < len(tc.in); i += n {
					w.Write([]byte(tc.in[i:min(i+n, len(tc.in))]))
				}
				w.Close()
				if b.String() != tc.want {
					t.Errorf("in pieces of %d: %d bytes %.80q..., want %d bytes", n, b.Len(), b.String(), len(tc.want))
				}
			}
		})
	}
}

func TestStripReturnsCleanInput(t *testing.T) {
	in := []byte("no escapes here\n")
	if out := Strip(in); &out[0] != &in[0] {
		t.Error("Strip copied an input with nothing to remove")
	}
}

func TestSequenceLen(t *testing.T) {
	for _, tc := range []struct {
		in       string
		n        int
		complete bool
	}{
		{"abc", 0, true},
		{"", 0, true},
		{"\x1b[31mx", 5, true},
		{"\x1b[31", 4, false},
		{"\x1b", 1, false},
		{"\x1b]0;t\x07x", 6, true},
		{"\x1b]0;t\x1b", 6, false},
		{"\x1b]0;t\nx", 5, true},
		{"\x1b]" + strings.Repeat("t", MaxString), MaxString, true},
		{"\x1b(Bx", 3, true},
		{"\r\nx", 1, true},
		{"\r\r\n", 2, true},
		{"\rx", 0, true},
		{"\r", 1, false},
		{"\r\x1b[0m\n", 5, true},
		{"\r\x1b[0mx", 0, true},
	} {
		n, complete := SequenceLen([]byte(tc.in))
		if n != tc.n || complete != tc.complete {
			t.Errorf("SequenceLen(%q) = %d, %v; want %d, %v", tc.in, n, complete, tc.n, tc.complete)
		}
	}
}

// Strip of any input: no longer than it, no ESC left, every newline kept
// (no sequence hides a line end), nothing more to strip, and a Writer fed
// it in pieces gives the same text.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		"hello\r\nworld", "a\x1b[31mred\x1b[0m\r\n", "\x1b]0;title\x07text", "\x1b]8;;http://x\x1b\\link",
		"before\n\x1b]0;stray 1\n2\n", "\x1bPq#0;2\x1b\\x", "50%\r\x1b[K100%\r\n", "\x1b(B\x1b=x\x1b\x1b[m",
		"a\r\r\x1b[K\rb\r\x1b[K", "\x1b[3\nx", "\x1b]" + strings.Repeat("t", MaxString+3) + "\x07z",
	} {
		f.Add([]byte(s), uint16(1))
		f.Add([]byte(s), uint16(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		out := Strip(in)
		if len(out) > len(in) {
			t.Fatalf("Strip made %d bytes of %d", len(out), len(in))
		}
		if bytes.IndexByte(out, escByte) >= 0 {
			t.Fatalf("Strip(%q) = %q keeps an ESC", in, out)
		}
		if a, b := bytes.Count(in, []byte("\n")), bytes.Count(out, []byte("\n")); a != b {
			t.Fatalf("Strip(%q) = %q: %d newlines of %d", in, out, b, a)
		}
		if again := Strip(out); !bytes.Equal(again, out) {
			t.Fatalf("Strip(%q) = %q, and again %q", in, out, again)
		}
		// Pieces of sizes 1 to split, from split itself.
		var b bytes.Buffer
		w := NewWriter(&b)
		n := int(split)%64 + 1
		for i := 0; i < len(in); {
			j := min(i+n, len(in))
			w.Write(in[i:j])
			i = j
			n = n*7%64 + 1
		}
		w.Close()
		if !bytes.Equal(b.Bytes(), out) {
			t.Fatalf("%q in pieces from %d: %q, Strip gives %q", in, split, b.Bytes(), out)
		}
	})
}
