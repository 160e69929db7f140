package ssh

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryNeverPrints: the package reports warnings through
// Options.Warn and prompts only through the writer given to
// TerminalPassphrase; no non-test file names os.Stdout or os.Stderr,
// prints with fmt.Print* or the log package, or writes a "bgjob: " line.
func TestLibraryNeverPrints(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := goparser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, "bgjob: ") {
				t.Errorf("%s: %s: messages carry no \"bgjob: \" prefix; the CLI adds it", fset.Position(lit.Pos()), lit.Value)
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch {
			case pkg.Name == "os" && (sel.Sel.Name == "Stdout" || sel.Sel.Name == "Stderr"),
				pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print"),
				pkg.Name == "log":
				t.Errorf("%s: %s.%s: the library must not print; report through Options.Warn", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
