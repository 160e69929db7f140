package shellgen

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// funcRE finds a library function's definition: the rule funcName
// follows, written once more for the tests.
var funcRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(bg_[a-z0-9_]+)\(\) \{\n`) })

// TestLibFiles holds the library to its layout: one file per topic, each
// opening with a comment that says what it holds, under 400 lines, and
// every function in it found by the closure.
func TestLibFiles(t *testing.T) {
	ents, err := shFiles.ReadDir("sh/lib")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]int{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sh") {
			continue
		}
		b, err := shFiles.ReadFile("sh/lib/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if !strings.HasPrefix(src, "# "+e.Name()+": ") {
			t.Errorf("lib/%s does not open with a comment \"# %s: what it holds\"", e.Name(), e.Name())
		}
		if n := strings.Count(src, "\n"); n >= 400 {
			t.Errorf("lib/%s has %d lines, want under 400: split it by topic", e.Name(), n)
		}
		for _, m := range funcRE().FindAllStringSubmatch(src, -1) {
			defined[m[1]]++
			if library().file[m[1]] != e.Name() {
				t.Errorf("%s, defined in lib/%s, is not in the library as a function of that file", m[1], e.Name())
			}
		}
	}
	if len(defined) != len(library().names) {
		t.Errorf("the files define %d functions, the library holds %d", len(defined), len(library().names))
	}
}

// TestClosureAcrossFiles checks that a script carries the functions it
// calls through functions of other library files, and no others.
func TestClosureAcrossFiles(t *testing.T) {
	// bg_obs (observe.sh) calls bg_live (procs.sh), which calls bg_scan
	// (procs.sh) and bg_tied, which calls bg_meta (jobs.sh).
	got := library().need("bg_obs \"$bg_d\"\n")
	for _, name := range []string{"bg_obs", "bg_live", "bg_scan", "bg_tied", "bg_meta", "bg_metaline", "bg_esc"} {
		if !slices.Contains(got, name) {
			t.Errorf("the closure of bg_obs lacks %s: %v", name, got)
		}
	}
	for _, name := range []string{"bg_stop", "bg_rm", "bg_autoprune", "bg_deadline", "bg_command"} {
		if slices.Contains(got, name) {
			t.Errorf("the closure of bg_obs holds %s, which it does not call: %v", name, got)
		}
	}
}

// TestAnatomyRejects checks that the goldens' Anatomy fails on a script
// that is not exactly its variables, its closure and its files.
func TestAnatomyRejects(t *testing.T) {
	script, err := StatusScript(Target{Root: "/srv", Workspace: "w"}, []string{"build"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Anatomy(script); err != nil {
		t.Fatalf("the script as generated: %v", err)
	}
	obs := library().text["bg_obs"]
	for name, bad := range map[string]string{
		"a function missing":     strings.Replace(script, obs, "", 1),
		"a function not called":  strings.Replace(script, obs, obs+library().text["bg_stop"], 1),
		"a function edited":      strings.Replace(script, obs, strings.Replace(obs, "printf", "echo", 1), 1),
		"a line of no file":      script + "echo extra\n",
		"a file edited":          strings.Replace(script, source("status.sh"), "bg_readroot\n", 1),
		"functions out of order": strings.Replace(strings.Replace(script, obs, "", 1), library().text["bg_readroot"], library().text["bg_readroot"]+obs, 1),
	} {
		if _, err := Anatomy(bad); err == nil {
			t.Errorf("%s: Anatomy accepted it", name)
		}
	}
}
