package cli

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/jobtext"
)

var durationTextRE = regexp.MustCompile(`^-?[0-9]+s$|^[0-9]+m[0-5][0-9]s$|^[0-9]+h[0-5][0-9]m$|^[0-9]+d[0-2][0-9]h$`)

// A value given to a size flag (--max-log-size) or a duration flag
// (--timeout, --grace, as pflag parses it): a size read is at least 8K,
// at most 2^62, the same in any case and again when printed as a number;
// a grace the CLI takes is the duration itself (0: KILL at once), up to
// 24h; anything refused is a usage error; a duration prints to the second.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{
		"8K", "8k", "8191", "64K", "100M", "2G", "2gb", "1KB", "0", "-1K", "+9K", " 9K", "9K ",
		"9223372036854775807", "4611686018427387904", "4194304G", "4194303G", "0x2000", "1e9", "K", "",
		"1s", "0", "1ns", "-1s", "24h", "24h0m0.000000001s", "87600h", "2562047h47m16.854775807s", "1.5h", ".5s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseSize(s); err == nil {
			if n < 8<<10 || n > 1<<62 {
				t.Fatalf("parseSize(%q) = %d", s, n)
			}
			for _, again := range []string{strings.ToLower(s), strings.ToUpper(s), strconv.FormatInt(n, 10)} {
				if m, err := parseSize(again); err != nil || m != n {
					t.Fatalf("parseSize(%q) = %d but parseSize(%q) = %d, %v", s, n, again, m, err)
				}
			}
		} else if !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("parseSize(%q): %v does not name the value", s, err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return
		}
		g, err := graceFlag(d)
		var ee *exitError
		switch {
		case err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 2):
			t.Fatalf("graceFlag(%s): %v is not a usage error", d, err)
		case err != nil && d >= 0 && d <= 24*time.Hour:
			t.Fatalf("graceFlag(%s) refused: %v", d, err)
		case err == nil && (g != d || d < 0 || d > 24*time.Hour):
			t.Fatalf("graceFlag(%s) = %s", d, g)
		}
		if d >= 0 && !durationTextRE.MatchString(jobtext.Duration(d)) {
			t.Fatalf("jobtext.Duration(%s) = %q", d, jobtext.Duration(d))
		}
	})
}
