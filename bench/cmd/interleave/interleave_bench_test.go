package main

import (
	"os"
	"slices"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"words", "bgjob run -q -- true", []string{"bgjob", "run", "-q", "--", "true"}},
		{"single quotes", `sh -c 'setsid nohup true >/dev/null 2>&1 </dev/null &'`, []string{"sh", "-c", "setsid nohup true >/dev/null 2>&1 </dev/null &"}},
		{"double quotes in single", `sh -c 'set -- "$1"/[0-9]*' sh /r`, []string{"sh", "-c", `set -- "$1"/[0-9]*`, "sh", "/r"}},
		{"double quotes", `echo "a \"b\" \$c"`, []string{"echo", `a "b" $c`}},
		{"backslash", `echo a\ b`, []string{"echo", "a b"}},
		{"empty word", `printf ''`, []string{"printf", ""}},
		{"spaces", "  a \t b  ", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := split(tt.in)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("split(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{`echo 'a`, `echo "a`} {
		if _, err := split(bad); err == nil {
			t.Errorf("split(%q): no error", bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want target
	}{
		{"bgjob / setsid <= 1.1", target{a: "bgjob", b: "setsid", op: "<=", limit: 1.1}},
		{"bgjob / nq < 1", target{a: "bgjob", b: "nq", op: "<", limit: 1}},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseTarget("a <= 2"); err == nil {
		t.Error("parseTarget without a ratio: no error")
	}
}

func TestQuantile(t *testing.T) {
	ts := []time.Duration{4, 1, 3, 2}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 2}, {1, 4}} {
		if got := quantile(ts, tt.q); got != tt.want {
			t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if !isAssignment("PATH=/x") || isAssignment("-c=1") || isAssignment("9A=1") {
		t.Error("isAssignment")
	}
}

// BenchmarkOnce measures what the harness adds to every measured command:
// forking, executing and waiting for /bin/true.
func BenchmarkOnce(b *testing.B) {
	f, err := tempFile(b)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := once(nil, []string{"/bin/true"}, f); err != nil {
			b.Fatal(err)
		}
	}
}

func tempFile(b *testing.B) (*os.File, error) {
	f, err := os.CreateTemp(b.TempDir(), "stderr")
	if err == nil {
		b.Cleanup(func() { f.Close() })
	}
	return f, err
}
