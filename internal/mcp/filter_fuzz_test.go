package mcp

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// readCapped is a read of an ended job's log from off, capped at limit
// bytes as bgjob caps it: whole characters (a byte that is not UTF-8 is
// one), at least one, so that every read gets on. truncated says there is
// more after it.
func readCapped(log []byte, off, limit int) (b []byte, truncated bool) {
	end := off
	for end < len(log) {
		_, n := utf8.DecodeRune(log[end:])
		if end+n-off > limit && end > off {
			break
		}
		end += n
	}
	return log[off:end], end < len(log)
}

// filteredText reads log to its end through filterRead, as job_output
// reads an ended job with filter re and max_bytes limit, and returns what
// the reads showed, one after the other. It fails the test if a read cut
// to the cap neither shows text nor moves on, or the reads do not end.
func filteredText(t *testing.T, log []byte, re *regexp.Regexp, limit int) string {
	var sb strings.Builder
	off := 0
	for reads := 0; ; reads++ {
		if reads > 2*len(log)+2 {
			t.Fatalf("max_bytes %d, filter %q: %d reads of %q did not reach its end (at %d)", limit, re, reads, log, off)
		}
		b, truncated := readCapped(log, off, limit)
		f := filterRead(b, re, true, limit, limit, !truncated, truncated)
		if len(f.text) > limit && len(f.text) > 4 {
			t.Fatalf("max_bytes %d: a read showed %d bytes, %q", limit, len(f.text), f.text)
		}
		sb.WriteString(f.text)
		off += f.used
		if !truncated && !f.cut {
			if off != len(log) {
				t.Fatalf("max_bytes %d, filter %q: the last read of %q stopped at %d of %d", limit, re, log, off, len(log))
			}
			return sb.String()
		}
		if f.text == "" && f.used == 0 {
			t.Fatalf("max_bytes %d, filter %q: a read cut to the cap at %d of %q showed nothing and stayed: no read ever gets on", limit, re, off, log)
		}
	}
}

// Filtered reads with any max_bytes from 1 up, one after the other over
// the whole log, show every matching line exactly once: with a filter
// that matches every line, the whole text; with any filter, when every
// line and its text fit the cap (else a line is judged a cap's worth at a
// time), the text of each line that matches and nothing else.
func FuzzFilterReads(f *testing.F) {
	for _, s := range []string{
		"abcdef\nghij\n", "x\xffabcdefgh\n", "😀\xffab\n", "a\n\nb\n", "no newline", "\xff\xfe\xfd\n\xf0\x9f\n",
		"error: 1\nok\nerror \xff\xff\xff\n", "é€𝄞\n𝄞\n", "\n\n\n", "0𝄞",
	} {
		for _, limit := range []uint8{0, 1, 2, 3, 4, 7, 100} {
			f.Add([]byte(s), limit, "a")
		}
	}
	f.Fuzz(func(t *testing.T, log []byte, max uint8, pattern string) {
		limit := int(max)%64 + 1
		if got, want := filteredText(t, log, regexp.MustCompile("^"), limit), clean(log, true); got != want {
			t.Fatalf("max_bytes %d, a filter that matches every line: reads of %q showed %q, want %q", limit, log, got, want)
		}
		if !utf8.ValidString(pattern) {
			return // not a pattern job_output takes
		}
		re := regexp.MustCompile(regexp.QuoteMeta(pattern))
		var want strings.Builder
		for rest := log; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			if len(line) > limit || len(clean(line, true)) > limit {
				return // judged a piece at a time
			}
			if re.Match(bytes.TrimSuffix(line, []byte("\n"))) {
				want.WriteString(clean(line, true))
			}
		}
		if got := filteredText(t, log, re, limit); got != want.String() {
			t.Fatalf("max_bytes %d, filter %q: reads of %q showed %q, want %q", limit, re, log, got, want.String())
		}
	})
}
