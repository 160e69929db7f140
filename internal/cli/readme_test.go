package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's install lines for shell completion name every package that
// "completion SHELL --help" says its script depends on (bash's needs
// bash-completion): "the `bash-completion` package", so that a user who follows them gets completion.
func TestReadmeCompletionNeeds(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "Shell completion")
	end := strings.Index(readme, "## Two commands")
	if start < 0 || end < start {
		t.Fatal("README: no shell completion section before \"## Two commands\"")
	}
	section := readme[start:end]
	dep := regexp.MustCompile(`depends on the '([^']+)' package`)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errs bytes.Buffer
		if code := Run(context.Background(), []string{"completion", shell, "--help"}, strings.NewReader(""), &out, &errs); code != 0 {
			t.Fatalf("completion %s --help: exit %d: %s", shell, code, errs.String())
		}
		for _, m := range dep.FindAllStringSubmatch(out.String(), -1) {
			if !strings.Contains(strings.Join(strings.Fields(section), " "), "the `"+m[1]+"` package") {
				t.Errorf("completion %s needs the %s package; the README's install section does not say so", shell, m[1])
			}
		}
	}
}
