package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
)

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"letters", "jjk", []string{"j", "j", "k"}},
		{"arrows", "\x1b[B\x1bOAq", []string{"\x1b[B", "\x1bOA", "q"}},
		{"esc then a key", "\x1b/", []string{"\x1b", "/"}},
		{"esc alone", "\x1b", []string{"\x1b"}},
		{"utf-8", "é\r", []string{"é", "\r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, splitKeys([]byte(tc.in))); d != "" {
				t.Errorf("splitKeys(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want byte
		ok   bool
	}{
		{`ctrl-\`, 0x1c, true}, {"ctrl-]", 0x1d, true}, {"^A", 0x01, true}, {"Ctrl-z", 0x1a, true},
		{"x", 0, false}, {"ctrl-", 0, false}, {"ctrl-1", 0, false}, {"ctrl-ab", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseKey(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseKey(%q) = %#x, %v; want %#x, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

// The jobs top reads again on its tick are those that may change without
// a file event; it watches the files of those not ended.
func TestTopLive(t *testing.T) {
	jobs := []jobdir.Job{
		{Meta: jobdir.Meta{ID: "run"}, Status: jobdir.StatusRunning},
		{Meta: jobdir.Meta{ID: "queued"}, Status: jobdir.StatusQueued},
		{Meta: jobdir.Meta{ID: "done"}, Status: jobdir.StatusExited},
		{Meta: jobdir.Meta{ID: "leftovers"}, Status: jobdir.StatusExited, LiveProcesses: 2},
		{Meta: jobdir.Meta{ID: "new"}, Status: jobdir.StatusUnreadable},
	}
	ids := func(jobs []jobdir.Job) []string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.ID)
		}
		return s
	}
	if d := cmp.Diff([]string{"run", "queued", "leftovers"}, ids(live(jobs))); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
	u, key := unended(jobs)
	if d := cmp.Diff([]string{"run", "queued", "new"}, ids(u)); d != "" || key != "run queued new" {
		t.Errorf("unended (-want +got):\n%s\nkey %q", d, key)
	}
}

// a asks to attach to the selected job.
func TestTopKeyAttach(t *testing.T) {
	v := &topView{jobs: []jobdir.Job{{Meta: jobdir.Meta{ID: "one"}}, {Meta: jobdir.Meta{ID: "two"}}}}
	v.key("j")
	if got := v.key("a"); got != (topAction{kind: actAttach, id: "two"}) {
		t.Errorf("a on the second job: %+v", got)
	}
	if got := (&topView{}).key("a"); got.kind != actNone {
		t.Errorf("a with no job: %+v", got)
	}
}
