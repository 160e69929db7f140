package jobdir_test

import (
	"errors"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"job id", "20261130T001502-k3f9q2", true},
		{"plain name", "build", true},
		{"all allowed characters", "a-Z_0.9@host:8080+x", true},
		{"one character", "x", true},
		{"leading digit", "1st", true},
		{"64 characters", strings.Repeat("a", 64), true},
		{"65 characters", strings.Repeat("a", 65), false},
		{"empty", "", false},
		{"dot", ".", false},
		{"dot dot", "..", false},
		{"parent path", "../x", false},
		{"slash", "/", false},
		{"absolute path", "/etc", false},
		{"inner slash", "a/b", false},
		{"leading dot", ".hidden", false},
		{"leading dash", "-rf", false},
		{"leading underscore", "_x", false},
		{"NUL", "a\x00b", false},
		{"trailing NUL", "a\x00", false},
		{"newline", "a\nb", false},
		{"trailing newline", "a\n", false},
		{"space", "a b", false},
		{"tab", "a\tb", false},
		{"quote", `a"b`, false},
		{"single quote", "a'b", false},
		{"backslash", `a\b`, false},
		{"dollar", "a$b", false},
		{"glob", "a*", false},
		{"non-ASCII", "caf\u00e9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jobdir.ValidateName("job name", tt.in)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateName(%q) = %v, want ok", tt.in, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateName(%q) = nil, want an error", tt.in)
			}
			if !errors.Is(err, jobdir.ErrBadName) {
				t.Errorf("ValidateName(%q) = %v, want it to wrap ErrBadName", tt.in, err)
			}
			if !strings.Contains(err.Error(), "job name") {
				t.Errorf("ValidateName(%q) = %v, want it to name the kind", tt.in, err)
			}
		})
	}
}

// TestValidateJobName: a job name in the form of a job id is refused, as
// every reference to it would name the job with that id; names that are
// close to one are not.
func TestValidateJobName(t *testing.T) {
	for in, ok := range map[string]bool{
		"20261205T062834-dayzfr":  false,
		"20261205T062834-dayzf":   true,
		"20261205T062834-dayzfr1": true,
		"build":                   true,
		"":                        false,
	} {
		if err := jobdir.ValidateJobName(in); (err == nil) != ok || err != nil && !errors.Is(err, jobdir.ErrBadName) {
			t.Errorf("ValidateJobName(%q) = %v, want ok %v", in, err, ok)
		}
	}
}

func TestNewIDFormat(t *testing.T) {
	tests := []struct {
		name   string
		t      time.Time
		prefix string // time to the second and the milliseconds in base 36
	}{
		{"UTC", time.Date(2026, 11, 30, 0, 15, 2, 0, time.UTC), "20261130T001502-00"},
		{"milliseconds", time.Date(2026, 11, 30, 0, 15, 2, 37_000_000, time.UTC), "20261130T001502-11"},
		{"last millisecond", time.Date(2026, 11, 30, 0, 15, 2, 999_999_999, time.UTC), "20261130T001502-rr"},
		{"other zone is converted to UTC", time.Date(2026, 11, 30, 1, 15, 2, 0, time.FixedZone("CET", 3600)), "20261130T001502-00"},
		{"year boundary", time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), "20261231T235959-00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := jobdir.NewID(tt.t)
			if !strings.HasPrefix(id, tt.prefix) || len(id) != len("20261130T001502-")+6 {
				t.Errorf("NewID() = %q, want %q followed by 4 characters", id, tt.prefix)
			}
			if !jobdir.IsID(id) {
				t.Errorf("IsID(%q) = false", id)
			}
			if err := jobdir.ValidateName("job id", id); err != nil {
				t.Errorf("ValidateName(%q) = %v", id, err)
			}
		})
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	// Steps from a millisecond to years, so every field of the time matters.
	at := base
	for _, step := range []time.Duration{time.Millisecond, 35 * time.Millisecond, 36 * time.Millisecond,
		time.Second, time.Minute, time.Hour, 24 * time.Hour, 40 * 24 * time.Hour, 400 * 24 * time.Hour} {
		for range 3 {
			at = at.Add(step)
			ids = append(ids, jobdir.NewID(at))
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("ids do not sort by start time: %q >= %q", ids[i-1], ids[i])
		}
	}
}

func TestNewIDUnique(t *testing.T) {
	// 10000 jobs started a millisecond apart: all ids differ and sort in
	// the order the jobs started.
	const n = 10000
	start := time.Now()
	ids := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range ids {
		id := jobdir.NewID(start.Add(time.Duration(i) * time.Millisecond))
		if !jobdir.IsID(id) {
			t.Fatalf("IsID(%q) = false", id)
		}
		if seen[id] {
			t.Fatalf("NewID returned %q twice", id)
		}
		seen[id] = true
		ids[i] = id
	}
	if !slices.IsSorted(ids) {
		t.Error("ids of jobs started a millisecond apart do not sort by start time")
	}

	// Within one millisecond only the random part tells ids apart. It has
	// 36^4 ≈ 1.7e6 values, so 1000 ids collide about once in three runs
	// (the launcher creates the directory exclusively and retries): allow
	// a few collisions, but not a weak or constant random part.
	const m = 1000
	suffixes := make(map[string]bool, m)
	chars := make(map[rune]bool)
	for range m {
		id := jobdir.NewID(start)
		random := id[len(id)-4:]
		suffixes[random] = true
		for _, c := range random {
			chars[c] = true
		}
	}
	if len(suffixes) < m-10 {
		t.Errorf("%d ids made in one millisecond have only %d distinct random parts", m, len(suffixes))
	}
	if len(chars) != 36 {
		t.Errorf("random parts use %d distinct characters, want 36", len(chars))
	}
}

func TestIsID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"20261130T001502-k3f9q2", true},
		{"20261130T001502-000000", true},
		{"20261130T001502-rrzzzz", true},
		{"20261130T001502-K3F9Q2", false},
		{"20261130T001502-k3f9q", false},
		{"20261130T001502-k3f9q2x", false},
		{"20261130-001502-k3f9q2", false},
		{"2026113T001502-k3f9q2", false},
		{"20261130T001502_k3f9q2", false},
		{"20261130T001502-k3f9q2\n", false},
		{"build", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := jobdir.IsID(tt.in); got != tt.want {
				t.Errorf("IsID(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	var j jobdir.Job
	j.Paths("/r/ws/" + testID)
	got := []string{j.Dir, j.StdoutPath, j.StderrPath}
	want := []string{"/r/ws/" + testID, "/r/ws/" + testID + "/stdout.log", "/r/ws/" + testID + "/stderr.log"}
	if !slices.Equal(got, want) {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
}

// TestIDForms: the shell pattern and the regular expression the scripts
// get match exactly what IsID accepts (all three come from idShape).
func TestIDForms(t *testing.T) {
	re := regexp.MustCompile("^" + strings.NewReplacer(`\{`, "{", `\}`, "}").Replace(jobdir.IDRegexp()) + "$")
	id := jobdir.NewID(time.Now())
	cases := []string{id, "", "x", id + "a", id[:21], strings.ToUpper(id), strings.Replace(id, "T", "t", 1),
		strings.Replace(id, "-", "_", 1), "20261130T001502-0k3f9q", "2026113aT001502-0k3f9q", "20261130T001502-0k3f9/"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := []byte(id)
		b[r.IntN(len(b))] = byte(r.IntN(128))
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		glob, err := path.Match(jobdir.IDPattern(), s)
		if err != nil {
			t.Fatal(err)
		}
		if is := jobdir.IsID(s); glob != is || re.MatchString(s) != is {
			t.Errorf("%q: IsID %v, IDPattern %v, IDRegexp %v", s, is, glob, re.MatchString(s))
		}
	}
}
