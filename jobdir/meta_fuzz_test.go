package jobdir_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
)

// Whatever meta.json holds, DecodeMeta returns an error or a Meta that
// EncodeMeta writes as one line and that decodes to the same Meta.
func FuzzDecodeMeta(f *testing.F) {
	full, err := jobdir.EncodeMeta(fullMeta())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(full),
		`{"version":1,"id":"20261201T104053-b94t8p","started_at":"2026-12-01T10:40:53.123456789+01:00","pid":1}`,
		`{"version":1,"command":"\ud800\u0000é\xff","argv":["a",""],"env":null,"owner":{"kind":"mcp","pid":-1}}`,
		`{"version":1,"started_at":"0000-01-01T00:00:00Z","pty_cols":-5,"max_log_size":9223372036854775807}`,
		`{"version":2}`, `{"version":1e400}`, `[]`, `null`, "{\"version\":1}\n{garbage",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := jobdir.DecodeMeta(b)
		if err != nil {
			return
		}
		enc, err := jobdir.EncodeMeta(m)
		if err != nil {
			t.Fatalf("EncodeMeta of what DecodeMeta read from %q: %v", b, err)
		}
		if bytes.IndexByte(enc, '\n') != len(enc)-1 {
			t.Fatalf("EncodeMeta wrote more than one line: %q", enc)
		}
		again, err := jobdir.DecodeMeta(enc)
		if err != nil {
			t.Fatalf("DecodeMeta(%q), as EncodeMeta wrote it: %v", enc, err)
		}
		if d := cmp.Diff(m, again); d != "" {
			t.Fatalf("meta.json %q round trip (-read +again):\n%s", b, d)
		}
	})
}
