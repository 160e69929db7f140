package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckedInDocsAreCurrent runs the same check as CI: the checked-in
// reference must be exactly what the commands generate today, whatever
// today's date is.
func TestCheckedInDocsAreCurrent(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	if err := run(filepath.Join("..", "..", "docs", "cli"), true); err != nil {
		t.Fatal(err)
	}
}

// manPage generates the pages and returns bgjob.1.
func manPage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "man", "bgjob.1"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestManPagesCarryTheFixedDate(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	b := manPage(t)
	want := `.TH "BGJOB" "1" "` + manDate().Format("Jan 2006") + `"`
	if !strings.Contains(b, want) {
		t.Errorf("bgjob.1 header lacks %q:\n%s", want, firstLines(b, 3))
	}
}

func TestSourceDateEpochStampsARelease(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1262304000") // 2010-01-01
	b := manPage(t)
	if !strings.Contains(b, `"Jan 2010"`) {
		t.Errorf("bgjob.1 header ignores SOURCE_DATE_EPOCH:\n%s", firstLines(b, 3))
	}
}

func TestCheckFindsAStalePage(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bgjob_gone.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, true); err == nil || !strings.Contains(err.Error(), "bgjob_gone.md") {
		t.Errorf("check of a tree with a stale page: got %v, want an error naming bgjob_gone.md", err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestCheckedInToolReferenceIsCurrent runs CI's check of the MCP tool
// reference.
func TestCheckedInToolReferenceIsCurrent(t *testing.T) {
	if err := runMCP(filepath.Join("..", "..", "docs", "mcp-tools.md"), true); err != nil {
		t.Fatal(err)
	}
}

// The check fails on a reference that lacks a line of today's, and
// regenerating makes it pass again; two generations are the same bytes.
func TestCheckFindsAStaleToolReference(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcp-tools.md")
	if err := runMCP(file, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## job_start", "| `until_output` | string |", "| `wait_sec` | number |  | `3` |", "| `jobs[].tail` | string |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
	if err := runMCP(file, true); err != nil {
		t.Fatalf("check right after generating: %v", err)
	}
	stale := strings.Replace(string(b), "| `until_output` |", "| `until` |", 1)
	if err := os.WriteFile(file, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runMCP(file, true); err == nil || !strings.Contains(err.Error(), "out of date") || !strings.Contains(err.Error(), "-mcp "+file) {
		t.Errorf("check of a stale reference: %v, want an error that says how to regenerate it", err)
	}
}
