package testneed

import (
	"testing"
)

// fakeT records how Missing ended a test.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }

func TestMissing(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		f := &fakeT{}
		Missing(f, "tmux")
		if f.failed != (ci != "") || f.skipped != (ci == "") {
			t.Errorf("CI=%q: failed %v, skipped %v", ci, f.failed, f.skipped)
		}
	}
}
