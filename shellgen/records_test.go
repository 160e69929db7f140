package shellgen_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/shellgen"
)

// TestScriptRecordsAreKnown: every record the files in sh/ and sh/lib/
// print is a kind records.go defines, with the fields it says, and the
// markers the scripts print are the ones Decode looks for.
func TestScriptRecordsAreKnown(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("sh", "*.sh"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in sh/: %v", err)
	}
	lib, err := filepath.Glob(filepath.Join("sh", "lib", "*.sh"))
	if err != nil || len(lib) == 0 {
		t.Fatalf("no library in sh/lib/: %v", err)
	}
	files = append(files, lib...)
	kinds := records.Fields()
	format := regexp.MustCompile(`printf '([^']*)'`)
	record := regexp.MustCompile(`^([A-Za-z])((?:\\t(?:%s|[a-z0-9]+))*)$`)
	seen := map[records.Kind]bool{}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		for _, p := range format.FindAllStringSubmatch(string(b), -1) {
			for _, line := range strings.Split(p[1], `\n`) {
				m := record.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				k := records.Kind(m[1])
				n, ok := kinds[k]
				if !ok && strings.ToLower(m[1]) == m[1] {
					// A lowercase letter is a record only once records.go
					// defines it (printf 'x\n' is a byte to test).
					continue
				}
				if !ok {
					t.Errorf("%s prints record %s, which records.go does not define", f, k)
					continue
				}
				seen[k] = true
				if got := strings.Count(m[2], `\t`); got != n {
					t.Errorf("%s prints record %s with %d fields, records.go says %d", f, k, got, n)
				}
			}
		}
	}
	for k := range kinds {
		if !seen[k] {
			t.Errorf("records.go defines record %s, which no script prints", k)
		}
	}
	for _, marker := range []string{shellgen.BeginMarker, shellgen.EndMarker} {
		if !strings.Contains(all.String(), `printf '\n`+marker+`\n'`) {
			t.Errorf("no script prints the marker %s", marker)
		}
	}
}
