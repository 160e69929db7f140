package jobdir_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
)

// fullMeta has every field of meta.json set.
func fullMeta() jobdir.Meta {
	m := testMeta()
	m.Argv = []string{"make", "-j4"}
	m.Shell = "bash"
	m.Env = []string{"CC", "CFLAGS"}
	m.Timeout = "1m30s"
	m.Stdin = true
	m.MaxLogSize = 1 << 20
	m.Merge = true
	m.PTY, m.PTYCols, m.PTYRows = true, 132, 50
	m.Buffering = "stdbuf -oL -eL, PYTHONUNBUFFERED=1"
	m.Umask = "0022"
	m.StartedAt = time.Date(2026, 11, 30, 0, 15, 2, 123_000_000, time.UTC)
	hs := time.Date(2026, 11, 30, 0, 15, 2, 345_000_000, time.UTC)
	m.HostStartedAt = &hs
	m.Owner = &jobdir.Owner{Kind: jobdir.OwnerMCP, PID: 777, ProcStart: "123456", BootID: testBoot,
		Hostname: "laptop", MachineID: "0123456789abcdef0123456789abcdef", PIDNamespace: "pid:[4026531836]", Keep: true}
	m.Labels = map[string]string{"team": "a", "mcp.client": "claude-code", "note": `a "quoted", comma'd <value> é`}
	m.Ulimits = []jobdir.Ulimit{{Name: "nofile", Soft: 64, Hard: 128}, {Name: "cpu", Soft: 10, Hard: jobdir.Unlimited}}
	return m
}

func TestMetaRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		meta func(m *jobdir.Meta)
	}{
		{"minimal", func(m *jobdir.Meta) { *m = jobdir.Meta{Version: jobdir.Version, ID: testID, Env: []string{}} }},
		{"typical", func(m *jobdir.Meta) {}},
		{"every field", func(m *jobdir.Meta) { *m = fullMeta() }},
		{"HTML characters are not escaped", func(m *jobdir.Meta) { m.Command = `a <b> && c > "d" 'e'` }},
		{"newlines, tabs and control bytes stay on one line", func(m *jobdir.Meta) {
			m.Command = "for i in 1 2; do\n\techo $i\ndone\r\x01\x1b[0m"
		}},
		{"non-ASCII UTF-8", func(m *jobdir.Meta) { m.Command = "echo 日本 é 😀 \u2028\u2029"; m.Cwd = "/tmp/ünï" }},
		{"process fields of a job on a host without /proc", func(m *jobdir.Meta) {
			m.ProcStart, m.BootID = "Mon Nov 30 00:15:02 2026", ""
		}},
		{"process fields not yet known", func(m *jobdir.Meta) { m.PID, m.PGID, m.ProcStart, m.BootID = 0, 0, "", "" }},
		{"labels and ulimits", func(m *jobdir.Meta) {
			m.Labels = map[string]string{"b": "2", "a": "1", "empty": ""}
			m.Ulimits = []jobdir.Ulimit{{Name: "nofile", Soft: 64, Hard: 64}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMeta()
			tt.meta(&m)
			b, err := jobdir.EncodeMeta(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Count(b, []byte("\n")) != 1 || !bytes.HasPrefix(b, []byte(`{"version":`)) {
				t.Errorf("EncodeMeta() = %q, want one line of JSON and a newline", b)
			}
			if !utf8.Valid(b) || bytes.Contains(b, []byte(`\u003c`)) || bytes.Contains(b, []byte(`\u0026`)) {
				t.Errorf("EncodeMeta() = %q, want UTF-8 without HTML escapes", b)
			}
			// The process fields are the last four, in the documented order.
			tail := fmt.Sprintf(jobdir.MetaProcessFormat, strconv.Itoa(m.PID), strconv.Itoa(m.PGID), m.ProcStart, m.BootID)
			if !bytes.HasSuffix(b, []byte(tail)) {
				t.Errorf("EncodeMeta() = %q, want it to end with %q", b, tail)
			}
			got, err := jobdir.DecodeMeta(b)
			if err != nil {
				t.Fatalf("DecodeMeta(%q): %v", b, err)
			}
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			// An observation holds the first line, without its newline.
			got, err = jobdir.DecodeMeta(bytes.TrimSuffix(b, []byte("\n")))
			if err != nil || !cmp.Equal(m, got) {
				t.Errorf("DecodeMeta(first line) = %+v, %v", got, err)
			}
			// encoding/json reads it as the same object.
			var std jobdir.Meta
			if err := json.Unmarshal(b, &std); err != nil || !cmp.Equal(m, std) {
				t.Errorf("json.Unmarshal(EncodeMeta()) = %+v, %v", std, err)
			}
		})
	}
}

// TestMetaPrefix checks the launcher's split: the prefix plus the process
// fields, written with MetaProcessFormat, is meta.json byte for byte.
func TestMetaPrefix(t *testing.T) {
	for _, m := range []jobdir.Meta{testMeta(), fullMeta(), {Version: jobdir.Version, ID: testID}} {
		prefix, err := jobdir.EncodeMetaPrefix(m)
		if err != nil {
			t.Fatal(err)
		}
		// The prefix is an object without its closing brace, and without
		// the process fields at its top level (the owner has its own).
		var top map[string]json.RawMessage
		if err := json.Unmarshal(append(slices.Clone(prefix), '}'), &top); err != nil || bytes.Contains(prefix, []byte("\n")) {
			t.Errorf("prefix %q: want one line of an object without its closing brace (%v)", prefix, err)
		}
		for _, k := range []string{"pid", "pgid", "proc_start", "boot_id", "buffering", "umask", "host_started_at"} {
			if _, ok := top[k]; ok {
				t.Errorf("prefix %q holds %s", prefix, k)
			}
		}
		// The prefix does not depend on the process fields.
		zero := m
		zero.PID, zero.PGID, zero.ProcStart, zero.BootID = 0, 0, "", ""
		if p, _ := jobdir.EncodeMetaPrefix(zero); !bytes.Equal(p, prefix) {
			t.Errorf("prefix depends on the process fields: %q, %q", p, prefix)
		}
		for _, pf := range []struct {
			pid, pgid   int
			start, boot string
		}{
			{4242, 4242, "987654", testBoot},
			{1, 1, "Mon Nov 30 00:15:02 2026", ""},
			{0, 0, "", ""},
		} {
			m := m
			m.PID, m.PGID, m.ProcStart, m.BootID = pf.pid, pf.pgid, pf.start, pf.boot
			want, err := jobdir.EncodeMeta(m)
			if err != nil {
				t.Fatal(err)
			}
			got := string(prefix) + fmt.Sprintf(jobdir.MetaHostFormat, jobdir.HostField("buffering", m.Buffering), jobdir.HostField("umask", m.Umask),
				hostStart(m), strconv.Itoa(pf.pid), strconv.Itoa(pf.pgid), pf.start, pf.boot)
			if got != string(want) {
				t.Errorf("prefix + host fields = %q\nEncodeMeta         = %q", got, want)
			}
		}
	}
	// The format holds four %s verbs and nothing printf(1) would read
	// differently from Go's fmt.
	if n := strings.Count(jobdir.MetaProcessFormat, "%"); n != 4 || strings.Count(jobdir.MetaProcessFormat, "%s") != 4 ||
		strings.Contains(jobdir.MetaProcessFormat, `\`) {
		t.Errorf("MetaProcessFormat %q: want exactly four %%s and no backslash", jobdir.MetaProcessFormat)
	}
}

// TestDecodeMetaFieldOrder checks that a reader does not depend on the
// order of the fields, nor on fields it does not know.
func TestDecodeMetaFieldOrder(t *testing.T) {
	want := fullMeta()
	b, err := jobdir.EncodeMeta(want)
	if err != nil {
		t.Fatal(err)
	}
	// The fields in the order they were written.
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v json.RawMessage
		dec.Decode(&v)
	}
	if len(keys) != len(obj) || len(keys) < 16 {
		t.Fatalf("keys %q of %q", keys, b)
	}
	join := func(keys []string, extra string) []byte {
		var s []string
		for _, k := range keys {
			s = append(s, strconv.Quote(k)+":"+string(obj[k]))
		}
		if extra != "" {
			s = append(s, extra)
		}
		return []byte("{" + strings.Join(s, ",") + "}")
	}
	reversed := slices.Clone(keys)
	slices.Reverse(reversed)
	sorted := slices.Sorted(slices.Values(keys))
	rotated := append(slices.Clone(keys[7:]), keys[:7]...)
	tests := []struct {
		name string
		in   []byte
	}{
		{"reversed", join(reversed, "")},
		{"sorted", join(sorted, "")},
		{"process fields first", join(rotated, "")},
		{"unknown fields", join(keys, `"future":{"a":[1,2]},"host_arch":"arm64"`)},
		{"pretty-printed", func() []byte {
			var buf bytes.Buffer
			json.Indent(&buf, join(reversed, ""), "", "  ")
			return buf.Bytes()
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jobdir.DecodeMeta(tt.in)
			if err != nil {
				t.Fatalf("DecodeMeta(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodeMeta (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeMetaRefuses(t *testing.T) {
	good, err := jobdir.EncodeMeta(testMeta())
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(v string) []byte {
		return bytes.Replace(good, []byte(`"version":1,`), []byte(`"version":`+v+`,`), 1)
	}
	tests := []struct {
		name    string
		in      []byte
		version bool // the error wraps ErrVersion
	}{
		{"version 2", withVersion("2"), true},
		{"version 0", withVersion("0"), true},
		{"version -1", withVersion("-1"), true},
		{"no version", bytes.Replace(good, []byte(`"version":1,`), nil, 1), true},
		{"version as a string", withVersion(`"1"`), false},
		{"version 1.5", withVersion("1.5"), false},
		{"empty", nil, false},
		{"truncated", good[:len(good)/2], false},
		{"two objects", append(slices.Clone(good), good...), false},
		{"an array", []byte(`[1]`), false},
		{"wrong type", []byte(`{"version":1,"id":42}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := jobdir.DecodeMeta(tt.in)
			if err == nil {
				t.Fatalf("DecodeMeta(%q) = %+v, want an error", tt.in, m)
			}
			if errors.Is(err, jobdir.ErrVersion) != tt.version {
				t.Errorf("DecodeMeta(%q) = %v; wraps ErrVersion: %v, want %v", tt.in, err, errors.Is(err, jobdir.ErrVersion), tt.version)
			}
			if !cmp.Equal(m, jobdir.Meta{}) {
				t.Errorf("DecodeMeta(%q) returned %+v with its error", tt.in, m)
			}
		})
	}
	// More than MaxMetaSize bytes are refused unread, even valid JSON.
	huge := bytes.Replace(good, []byte(`{`), []byte(`{"x_pad":"`+strings.Repeat("x", jobdir.MaxMetaSize)+`",`), 1)
	if _, err := jobdir.DecodeMeta(huge); !errors.Is(err, jobdir.ErrMetaSize) {
		t.Errorf("DecodeMeta of %d bytes: %v, want ErrMetaSize", len(huge), err)
	}
	// Derive reports such a job unreadable, and says why.
	j := jobdir.Derive(jobdir.Observation{Dir: testDir, Meta: string(withVersion("2")), HasMeta: true, ExitCode: "0", HasExit: true}, "")
	if j.Status != jobdir.StatusUnreadable || !strings.Contains(j.Error, "version 2") {
		t.Errorf("Derive of a version 2 meta.json: %s, %q; want unreadable naming the version", j.Status, j.Error)
	}
}

// TestMetaSizeRefused: no Meta whose meta.json would exceed MaxMetaSize is
// encoded, so bgjob never writes one its readers refuse; bgjob.MaxCommand
// of text fits, twice over (an argv job records its words twice).
func TestMetaSizeRefused(t *testing.T) {
	m := testMeta()
	m.Command = strings.Repeat("\x01", jobdir.MaxMetaSize/6+1) // each \\u0001 in JSON
	if _, err := jobdir.EncodeMetaPrefix(m); !errors.Is(err, jobdir.ErrMetaSize) {
		t.Errorf("EncodeMetaPrefix of a %d-byte command of control characters: %v, want ErrMetaSize", len(m.Command), err)
	}
	if _, err := jobdir.EncodeMeta(m); !errors.Is(err, jobdir.ErrMetaSize) {
		t.Errorf("EncodeMeta: %v, want ErrMetaSize", err)
	}
	m.Command = strings.Repeat("echo 'it''s' \"$x\"\n", (1<<20)/20)
	m.Argv = []string{"sh", "-c", m.Command}
	b, err := jobdir.EncodeMeta(m)
	if err != nil {
		t.Fatalf("EncodeMeta of a 1 MiB argv job: %v", err)
	}
	if _, err := jobdir.DecodeMeta(b); err != nil {
		t.Errorf("DecodeMeta of a 1 MiB argv job's %d bytes: %v", len(b), err)
	}
}

// TestMetaNotUTF8 checks what docs/format.md says of bytes that are not
// UTF-8: meta.json is UTF-8, each invalid byte becomes U+FFFD.
func TestMetaNotUTF8(t *testing.T) {
	m := testMeta()
	m.Command = "printf '\xff\xfe' > caf\xe9 # \xe6\x97"
	m.Argv = []string{"printf", "\xff\xfe", "日本\x80"}
	m.Cwd = "/tmp/\xc3"
	b, err := jobdir.EncodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b) {
		t.Fatalf("EncodeMeta() = %q, not UTF-8", b)
	}
	got, err := jobdir.DecodeMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	want := m
	want.Command = "printf '\uFFFD\uFFFD' > caf\uFFFD # \uFFFD\uFFFD"
	want.Argv = []string{"printf", "\uFFFD\uFFFD", "日本\uFFFD"}
	want.Cwd = "/tmp/\uFFFD"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	// A meta.json that some other writer left with raw invalid bytes in a
	// string reads the same way.
	raw := bytes.Replace(b, []byte(`\ufffd\ufffd' > caf\ufffd`), []byte("\xff\xfe' > caf\xe9"), 1)
	if bytes.Equal(raw, b) {
		t.Fatalf("no command in %q", b)
	}
	got, err = jobdir.DecodeMeta(raw)
	if err != nil || got.Command != want.Command {
		t.Errorf("DecodeMeta(raw bytes) = %q, %v; want %q", got.Command, err, want.Command)
	}
}

// hostStart returns m's host_started_at as the wrapper appends it.
func hostStart(m jobdir.Meta) string {
	if m.HostStartedAt == nil {
		return ""
	}
	return jobdir.HostField("host_started_at", m.HostStartedAt.UTC().Format(jobdir.EndedAtLayout))
}
