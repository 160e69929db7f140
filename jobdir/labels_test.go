package jobdir_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
)

func TestParseLabel(t *testing.T) {
	tests := []struct {
		in, key, value string
		bad            bool
	}{
		{in: "team=a", key: "team", value: "a"},
		{in: "mcp.client=Claude Code", key: "mcp.client", value: "Claude Code"},
		{in: "url=http://x/?a=b", key: "url", value: "http://x/?a=b"},
		{in: "empty=", key: "empty", value: ""},
		{in: "quote=a\"b,c", key: "quote", value: "a\"b,c"},
		{in: "novalue", bad: true},
		{in: "=x", bad: true},
		{in: "bad key=x", bad: true},
		{in: ".dot=x", bad: true},
		{in: strings.Repeat("k", 65) + "=x", bad: true},
		// meta.json's own fields: scripts find a job's name by its
		// "name":"…" in the line.
		{in: "name=x", bad: true},
		{in: "pid=1", bad: true},
		{in: "status=x", bad: true},
		{in: "tab=a\tb", bad: true},
		{in: "newline=a\nb", bad: true},
		{in: "utf8=\xff", bad: true},
		{in: "long=" + strings.Repeat("v", jobdir.MaxLabelValue+1), bad: true},
		{in: "long=" + strings.Repeat("v", jobdir.MaxLabelValue), key: "long", value: strings.Repeat("v", jobdir.MaxLabelValue)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, v, err := jobdir.ParseLabel(tt.in)
			if tt.bad {
				if !errors.Is(err, jobdir.ErrBadLabel) {
					t.Errorf("ParseLabel(%q) = %q, %q, %v; want ErrBadLabel", tt.in, k, v, err)
				}
				return
			}
			if err != nil || k != tt.key || v != tt.value {
				t.Errorf("ParseLabel(%q) = %q, %q, %v; want %q, %q", tt.in, k, v, err, tt.key, tt.value)
			}
		})
	}
}

func TestHasLabels(t *testing.T) {
	labels := map[string]string{"team": "a", "role": "web"}
	tests := []struct {
		name string
		want map[string]string
		has  bool
	}{
		{"no filter", nil, true},
		{"one", map[string]string{"team": "a"}, true},
		{"all", map[string]string{"team": "a", "role": "web"}, true},
		{"one differs", map[string]string{"team": "a", "role": "db"}, false},
		{"missing key", map[string]string{"owner": "x"}, false},
		{"empty value is not absence", map[string]string{"x": ""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jobdir.HasLabels(labels, tt.want); got != tt.has {
				t.Errorf("HasLabels(%v, %v) = %v", labels, tt.want, got)
			}
		})
	}
}

func TestParseUlimit(t *testing.T) {
	tests := []struct {
		in   string
		want jobdir.Ulimit
		bad  string // a substring of the error
	}{
		{in: "nofile=64", want: jobdir.Ulimit{Name: "nofile", Soft: 64, Hard: 64}},
		{in: "nofile=32:64", want: jobdir.Ulimit{Name: "nofile", Soft: 32, Hard: 64}},
		{in: "cpu=unlimited", want: jobdir.Ulimit{Name: "cpu", Soft: -1, Hard: -1}},
		{in: "core=0:unlimited", want: jobdir.Ulimit{Name: "core", Soft: 0, Hard: -1}},
		{in: "memlock=-1", want: jobdir.Ulimit{Name: "memlock", Soft: -1, Hard: -1}},
		{in: "foo=1", bad: `unknown limit "foo"`},
		{in: "rtprio=1", bad: "unknown limit"},
		{in: "nofile", bad: "NAME=SOFT[:HARD]"},
		{in: "nofile=x", bad: "not a number"},
		{in: "nofile=-2", bad: "not a number"},
		{in: "nofile=64:32", bad: "higher than the hard"},
		{in: "nofile=unlimited:64", bad: "higher than the hard"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := jobdir.ParseUlimit(tt.in)
			if tt.bad != "" {
				if !errors.Is(err, jobdir.ErrBadUlimit) || !strings.Contains(err.Error(), tt.bad) {
					t.Errorf("ParseUlimit(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseUlimit(%q) (-want +got):\n%s", tt.in, diff)
			}
			if back, err := jobdir.ParseUlimit(got.String()); err != nil || back != got {
				t.Errorf("ParseUlimit(%q.String() = %q) = %+v, %v", tt.in, got.String(), back, err)
			}
		})
	}
}
