package mcp

import (
	"regexp"
	"testing"
)

// TestSafeReader: safeReader does what the regexp it replaced did, one
// "_" for each run of characters a reader's name may not hold.
func TestSafeReader(t *testing.T) {
	re := regexp.MustCompile(`[^A-Za-z0-9._@:+-]+`)
	for _, s := range []string{
		"", "claude-code", "Claude Desktop", "a//b", "  lead", "trail  ", "é", "naïve client",
		"x\xffy", "\xff\xfe", "日本語", "ok._@:+-ok", "tab\there", "a b\x00c", "Z9_z0",
	} {
		if got, want := safeReader(s), re.ReplaceAllString(s, "_"); got != want {
			t.Errorf("safeReader(%q) = %q, want %q", s, got, want)
		}
	}
}
