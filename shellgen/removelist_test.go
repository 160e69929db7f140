package shellgen

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRemoveKnowsEveryJobFile: every file a script writes into a job
// directory ("$bg_d/NAME") is one rm.sh's bg_rmjob may remove. A name
// left off its list makes every job that has the file unremovable: rm and
// prune refuse it as holding files bgjob did not write.
func TestRemoveKnowsEveryJobFile(t *testing.T) {
	files, err := filepath.Glob("sh/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := filepath.Glob("sh/lib/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	remove, err := os.ReadFile("sh/lib/remove.sh")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`"\$bg_d/([A-Za-z_.-]+)`)
	seen := map[string]bool{}
	for _, f := range append(files, lib...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllSubmatch(b, -1) {
			seen[string(m[1])] = true
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d job file names in the scripts: the pattern no longer matches how they name them", len(seen))
	}
	// The names bg_rmjob accepts: the patterns of its case, which may
	// continue over lines.
	list := regexp.MustCompile(`case \$\{bg_rx##\*/\} in\s+((?:[^)]|\\\n)+)\)`).FindSubmatch(remove)
	if list == nil {
		t.Fatal("remove.sh: no case over the names of a job directory's files")
	}
	var patterns []string
	for _, p := range strings.Split(strings.NewReplacer("\\\n", " ", "\n", " ", "\t", " ").Replace(string(list[1])), "|") {
		if p = strings.TrimSpace(p); p != "" {
			patterns = append(patterns, p)
		}
	}
	for name := range seen {
		if strings.HasSuffix(name, "-") { // a prefix: cursor-READER
			name += "READER"
		}
		known := false
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				known = true
			}
		}
		if !known {
			t.Errorf("the scripts write %s into a job directory, and remove.sh does not remove it (it knows %q)", name, patterns)
		}
	}
}
