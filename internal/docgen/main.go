// Command docgen writes bgjob's CLI reference (Markdown) and man pages from
// the cobra commands, or with -check verifies that the checked-in copies
// are up to date.
//
//	go run ./internal/docgen docs/cli
//	go run ./internal/docgen -check docs/cli
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"

	"github.com/bgjob/bgjob/internal/cli"
)

func main() {
	check := flag.Bool("check", false, "report whether DIR is up to date instead of writing it")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: docgen [-check] DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if err := run(dir, *check); err != nil {
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
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	hdr := &doc.GenManHeader{Title: "BGJOB", Section: "1", Source: "bgjob", Manual: "bgjob manual"}
	if err := doc.GenManTree(root, hdr, filepath.Join(dir, "man")); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// compare reports the first file that differs between the fresh tree got
// and the checked-in tree want.
func compare(got, want string) error {
	return filepath.WalkDir(got, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(got, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(want, rel))
		if err != nil || !bytes.Equal(a, b) {
			return fmt.Errorf("%s is out of date: run 'go run ./internal/docgen %s' (or 'task docs')", filepath.Join(want, rel), want)
		}
		return nil
	})
}
