package main

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Markdown (blackfriday, which cobra's man pages go through, with
// go-md2man's extensions) gives inlineMarks a meaning anywhere in a line and
// lineMarks at its start (headings, quotes, lists, definitions, tables,
// rules, fences); a backslash takes the meaning back. An ordered list
// starts with digits and a dot.
const (
	inlineMarks = "\\`*_[<&"
	lineMarks   = "#>-+*:|~`"
)

var orderedItem = regexp.MustCompile(`^([0-9]+)(\.)`)

// plainText makes the help of cmd and the commands below it Markdown that
// reads as the help does: cobra writes descriptions (and, in man pages,
// flag usages) into Markdown as they are, so "<root>/<id>/" was HTML and
// vanished from the page, "\\[" lost a backslash, and indented example
// lines ran into the sentence before. With usages, the flags' usages too:
// the Markdown reference fences them, as both fence the examples.
func plainText(cmd *cobra.Command, usages bool) {
	done := map[*pflag.Flag]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		// cobra adds the help flag only when it writes the page.
		c.InitDefaultHelpFlag()
		c.Short = escapeMarkdown(c.Short)
		c.Long = escapeMarkdown(c.Long)
		// A persistent flag is the same *pflag.Flag in every command below.
		escape := func(f *pflag.Flag) {
			if !done[f] {
				done[f] = true
				f.Usage = escapeMarkdown(f.Usage)
			}
		}
		if usages {
			c.NonInheritedFlags().VisitAll(escape)
			c.InheritedFlags().VisitAll(escape)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}

// escapeMarkdown returns s as Markdown that renders as s: every character
// with a Markdown meaning escaped, and an indented line within a paragraph
// (an example inside a description) kept on a line of its own instead of
// running into the sentence before. A block indented by a tab or four
// spaces after a blank line stays as it is: Markdown shows it as code, as
// it is written (cobra's completion help has such blocks).
func escapeMarkdown(s string) string {
	lines := strings.Split(s, "\n")
	blank := func(i int) bool { return i < 0 || i >= len(lines) || strings.TrimSpace(lines[i]) == "" }
	indented := func(i int) bool { return !blank(i) && strings.TrimLeft(lines[i], " \t") != lines[i] }
	var b strings.Builder
	code := false
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if blank(i) {
			continue
		}
		if (code || blank(i-1)) && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ")) {
			code = true
			b.WriteString(line)
			continue
		}
		code = false
		var text strings.Builder
		for _, r := range strings.TrimLeft(line, " \t") {
			if strings.ContainsRune(inlineMarks, r) {
				text.WriteByte('\\')
			}
			text.WriteRune(r)
		}
		t := orderedItem.ReplaceAllString(text.String(), `$1\$2`)
		if strings.ContainsRune(lineMarks, rune(t[0])) {
			b.WriteByte('\\')
		}
		b.WriteString(t)
		if !blank(i+1) && (indented(i) || indented(i+1)) {
			// Two spaces at the end of a line: a line break.
			b.WriteString("  ")
		}
	}
	return b.String()
}
