package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Usage errors say what is wrong in the command's words, suggest the flag
// meant and point at the command's own help; with --json an error is also
// an object on stdout whose kind tells "no such job" from the rest.
func TestUsageErrorsAndKinds(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
		kind   string // of the --json object on stdout; "" for none
	}{
		{"flag typo", []string{"run", "--tiemout", "5s", "--", "true"}, 2, []string{"unknown flag: --tiemout (did you mean --timeout?)", "hint: see 'bgjob run --help'"}, ""},
		{"flag swap", []string{"logs", "--tial", "3", "x"}, 2, []string{"(did you mean --tail?)", "see 'bgjob logs --help'"}, ""},
		{"global flag typo", []string{"ls", "--workspac", "x"}, 2, []string{"(did you mean --workspace?)"}, ""},
		{"no close flag", []string{"ls", "--zzzzzz"}, 2, []string{"unknown flag: --zzzzzz\n", "see 'bgjob ls --help'"}, ""},
		{"wait without id", []string{"wait"}, 2, []string{"wait needs a job id or name, or --label\n", "see 'bgjob wait --help'"}, ""},
		{"logs without id", []string{"logs"}, 2, []string{"logs needs a job id or name\n"}, ""},
		{"run without command", []string{"run"}, 2, []string{"run needs a command"}, ""},
		{"no such job", []string{"wait", "--json", "nosuch"}, 1, []string{"job nosuch: not found"}, "not_found"},
		{"status of no such job", []string{"status", "--json", "nosuch"}, 1, []string{"not found"}, "not_found"},
		{"usage with json", []string{"wait", "--json", "--timeout", "-1s", "x"}, 2, []string{"must not be negative"}, "usage"},
		{"unreachable", []string{"-H", "127.0.0.1:1", "ls", "--json"}, 1, []string{"connection refused"}, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			t.Setenv("BGJOB_ROOT", root)
			t.Setenv("BGJOB_HOST", "")
			code := Run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q lacks %q", stderr.String(), w)
				}
			}
			var e errorJSON
			if tc.kind == "" {
				if stdout.Len() > 0 {
					t.Errorf("stdout %q, want nothing", stdout.String())
				}
				return
			}
			if err := json.Unmarshal(stdout.Bytes(), &e); err != nil || e.Kind != tc.kind || e.Error == "" {
				t.Errorf("stdout %q (%v), want an error object of kind %s", stdout.String(), err, tc.kind)
			}
		})
	}
}
