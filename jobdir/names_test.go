package jobdir

import (
	"regexp"
	"testing"
)

// isName and IsID match by hand what these expressions say: the same
// answer for every string tried, the edges of each included.
func TestNameAndIDMatchTheirExpressions(t *testing.T) {
	nameRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,63}$`)
	idRE := regexp.MustCompile(`^[0-9]{8}T[0-9]{6}-[0-9a-z]{6}$`)
	long := "a123456789012345678901234567890123456789012345678901234567890123"
	for _, s := range []string{
		"", "a", "A", "0", ".", "..", "-a", "a-", "a b", "a/b", "a\nb", "é", "aé", "web@host:8080+x.y_z-1",
		long, long + "4", "_a", "a_", "a\x00",
		"20261130T001502-0k3f9q", "20261130T001502-0K3F9Q", "20261130t001502-0k3f9q", "2026113aT001502-0k3f9q",
		"20261130T001502_0k3f9q", "20261130T001502-0k3f9", "20261130T001502-0k3f9qq", "20261130T00150a-0k3f9q",
		"20261130T001502-0k3f9-", "20261130T001502-0k3f9\xff",
	} {
		if got, want := isName(s), nameRE.MatchString(s); got != want {
			t.Errorf("isName(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := IsID(s), idRE.MatchString(s); got != want {
			t.Errorf("IsID(%q) = %v, the expression says %v", s, got, want)
		}
	}
}

func FuzzNameAndID(f *testing.F) {
	nameRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,63}$`)
	idRE := regexp.MustCompile(`^[0-9]{8}T[0-9]{6}-[0-9a-z]{6}$`)
	f.Add("20261130T001502-0k3f9q")
	f.Add("web@host")
	f.Fuzz(func(t *testing.T, s string) {
		if isName(s) != nameRE.MatchString(s) || IsID(s) != idRE.MatchString(s) {
			t.Errorf("%q: isName %v, IsID %v; the expressions disagree", s, isName(s), IsID(s))
		}
	})
}
