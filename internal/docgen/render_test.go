package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bgjob/bgjob/internal/cli"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestManPagesSayWhatHelpSays renders every generated page as a reader
// sees it, with man -l, and checks that the page carries the help text word
// for word: the short description, the long one, every flag's usage and
// every example line. The Markdown-to-roff step once ate
// "<root>/<workspace>/<id>/" as HTML and rendered "///".
func TestManPagesSayWhatHelpSays(t *testing.T) {
	man, err := exec.LookPath("man")
	if err != nil {
		testneed.Missing(t, "man (Debian: man-db)")
	}
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range commands(cli.Command()) {
		page := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + ".1"
		t.Run(page, func(t *testing.T) {
			// No hyphenation, no justification, plain ASCII: what is left
			// to differ from the help text is where lines break.
			c := exec.Command(man, "--nh", "--nj", "-P", "cat", "-l", filepath.Join(dir, "man", page))
			c.Env = append(manEnv(), "LC_ALL=C", "MANWIDTH=80")
			var stderr strings.Builder
			c.Stderr = &stderr
			out, err := c.Output()
			if err != nil {
				t.Fatalf("man -l %s: %v\n%s", page, err, stderr.String())
			}
			rendered := words(string(out))
			long := cmd.Long
			if long == "" {
				long = cmd.Short
			}
			check := func(what, text string) {
				t.Helper()
				if want := words(text); !strings.Contains(rendered, want) {
					t.Errorf("the page lacks the %s as help gives it: %s", what, parting(rendered, want))
				}
			}
			check("short description", cmd.Short)
			check("description", long)
			flagUsages := func(fs *pflag.FlagSet) {
				fs.VisitAll(func(f *pflag.Flag) {
					if !f.Hidden {
						check("usage of --"+f.Name, f.Usage)
					}
				})
			}
			flagUsages(cmd.NonInheritedFlags())
			flagUsages(cmd.InheritedFlags())
			for _, line := range strings.Split(cmd.Example, "\n") {
				check("example", line)
			}
		})
	}
}

// manEnv is the environment without what changes how man renders a page:
// troff refuses an empty SOURCE_DATE_EPOCH, and MAN_KEEP_FORMATTING would
// keep the overstrikes of bold text.
func manEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "SOURCE_DATE_EPOCH" && k != "MAN_KEEP_FORMATTING" {
			env = append(env, kv)
		}
	}
	return env
}

// commands returns cmd and every command below it that has a page.
func commands(cmd *cobra.Command) []*cobra.Command {
	all := []*cobra.Command{cmd}
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			all = append(all, commands(c)...)
		}
	}
	return all
}

// words is s with every run of white space made one space, and a word
// broken after its hyphen at the end of a line (roff breaks there even
// without hyphenation) joined again.
func words(s string) string {
	return strings.Join(strings.Fields(hyphenBreak.ReplaceAllString(s, "$1-")), " ")
}

var hyphenBreak = regexp.MustCompile(`([[:alnum:]])-\n\s*`)

// parting shows where page and want part: the last words of the longest
// start of want that page has, then how each goes on.
func parting(page, want string) string {
	w := strings.Fields(want)
	for n := len(w); n > 0; n-- {
		prefix := strings.Join(w[:n], " ")
		i := strings.Index(page, prefix)
		if i < 0 {
			continue
		}
		same := strings.Join(w[max(0, n-8):n], " ")
		rest := page[i+len(prefix):]
		return fmt.Sprintf("after %q\nhelp goes on %q\npage goes on %q", same, clip(strings.Join(w[n:], " ")), clip(rest))
	}
	return "the page has not even its first word"
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestMarkdownReferenceSaysWhatHelpSays: the Markdown reference escapes
// the help's descriptions, so that a renderer shows them as help does: no
// raw HTML such as "<root>" (GitHub drops the tag, and the text with it),
// and with CommonMark's backslash escapes taken back, the help word for
// word.
func TestMarkdownReferenceSaysWhatHelpSays(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range commands(cli.Command()) {
		file := strings.ReplaceAll(cmd.CommandPath(), " ", "_") + ".md"
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			if cmd.Long != "" {
				_, synopsis, _ := strings.Cut(md, "### Synopsis\n")
				synopsis, _, _ = strings.Cut(synopsis, "```")
				if rawHTML.MatchString(synopsis) {
					t.Errorf("the synopsis has raw HTML %q", rawHTML.FindString(synopsis))
				}
				md = synopsis
			}
			long := cmd.Long
			if long == "" {
				long = cmd.Short
			}
			shown := words(markdownEscape.ReplaceAllString(md, "$1"))
			if want := words(long); !strings.Contains(shown, want) {
				t.Errorf("the reference lacks the description as help gives it: %s", parting(shown, want))
			}
		})
	}
}

var (
	// rawHTML is an HTML tag that no backslash escapes.
	rawHTML = regexp.MustCompile(`(^|[^\\])<[A-Za-z/]`)
	// markdownEscape is a CommonMark backslash escape.
	markdownEscape = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
)
