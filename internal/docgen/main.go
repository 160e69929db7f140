// Command docgen writes bgjob's CLI reference (Markdown) and man pages from
// the cobra commands, and with -mcp the MCP tool reference from the
// server's own schemas; with -check it verifies that the checked-in copies
// are up to date.
//
//	go run ./internal/docgen docs/cli
//	go run ./internal/docgen -check docs/cli
//	go run ./internal/docgen -mcp docs/mcp-tools.md
//	go run ./internal/docgen -check -mcp docs/mcp-tools.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra/doc"

	"github.com/bgjob/bgjob/internal/cli"
)

func main() {
	check := flag.Bool("check", false, "report whether DIR (or FILE) is up to date instead of writing it")
	mcpFile := flag.String("mcp", "", "write the MCP tool reference to `FILE` instead of the CLI reference")
	flag.Parse()
	var err error
	switch {
	case *mcpFile != "" && flag.NArg() == 0:
		err = runMCP(*mcpFile, *check)
	case *mcpFile == "" && flag.NArg() == 1:
		err = run(flag.Arg(0), *check)
	default:
		fmt.Fprintln(os.Stderr, "usage: docgen [-check] DIR | docgen [-check] -mcp FILE")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	out := dir
	if check {
		tmp, err := os.MkdirTemp("", "docgen")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	if err := generate(out); err != nil {
		return err
	}
	if !check {
		return nil
	}
	return compare(out, dir)
}

func generate(dir string) error {
	for _, sub := range []string{"", "man"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	root := cli.Command()
	root.DisableAutoGenTag = true
	plainText(root, false)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	hdr := &doc.GenManHeader{Title: "BGJOB", Section: "1", Source: "bgjob", Manual: "bgjob manual"}
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		hdr.Date = manDate()
	}
	// The man pages go through Markdown: a tree of their own, its help
	// escaped as Markdown.
	man := cli.Command()
	man.DisableAutoGenTag = true
	plainText(man, true)
	if err := doc.GenManTree(man, hdr, filepath.Join(dir, "man")); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// manDate is the date in the man pages' header. It is fixed so that the
// generated pages are the same bytes whenever they are generated (cobra would
// stamp the current month and -check would fail on the first of every month);
// a packager may set SOURCE_DATE_EPOCH to stamp a release date instead.
func manDate() *time.Time {
	d := time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)
	return &d
}

// compare reports the first file that differs between the fresh tree got
// and the checked-in tree want, and any file in want that got lacks (a page
// of a command that no longer exists).
func compare(got, want string) error {
	stale := func(rel string) error {
		return fmt.Errorf("%s is out of date: run 'go run ./internal/docgen %s' (or 'task docs')", filepath.Join(want, rel), want)
	}
	err := filepath.WalkDir(got, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(got, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(want, rel))
		if err != nil || !bytes.Equal(a, b) {
			return stale(rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return filepath.WalkDir(want, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		if _, err := os.Stat(filepath.Join(got, rel)); err != nil {
			return fmt.Errorf("%s has no command: remove it, or run 'go run ./internal/docgen %s' in a clean directory", filepath.Join(want, rel), want)
		}
		return nil
	})
}
