package shellgen

import (
	"embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/bgjob/bgjob/jobdir"
)

// The scripts, each a whole file in sh/: begin.sh starts every script,
// each verb has one file, and sh/lib/ holds the functions they share, one
// file per topic.
//
//go:embed sh/*.sh sh/lib/*.sh
var shFiles embed.FS

// The lines that frame a script's output (begin.sh and bg_end print them).
const (
	BeginMarker = "@@bgjob-begin@@"
	EndMarker   = "@@bgjob-end@@"
)

// config is the block of variable assignments Go writes before a script's
// text: the only shell Go writes. Values are quoted; a value Quote refuses
// (a NUL byte) is an error when the script is built.
type config struct {
	b   strings.Builder
	err error
}

// set assigns the string v to the variable name.
func (c *config) set(name, v string) {
	q, err := Quote(v)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("%s: %w", strings.TrimPrefix(name, "bg_"), err)
	}
	c.b.WriteString(name + "=" + q + "\n")
}

// setInt assigns the integer v to the variable name.
func (c *config) setInt(name string, v int64) {
	c.b.WriteString(name + "=" + strconv.FormatInt(v, 10) + "\n")
}

// MarkLen is how many bytes of a log before a reader's offset, at most,
// make its mark (Logs.Marks): the bytes the scripts look for there to tell
// a log truncated and grown again past the offset (bg_moved).
const MarkLen = 16

// setMark assigns the mark b (its last MarkLen bytes) to the variable
// name, in hex as od -tx1 prints it, without blanks (bg_markof).
func (c *config) setMark(name string, b []byte) {
	c.b.WriteString(name + "=" + hex.EncodeToString(b[max(len(b)-MarkLen, 0):]) + "\n")
}

// setBool assigns 1 or 0 to the variable name.
func (c *config) setBool(name string, v bool) {
	n := int64(0)
	if v {
		n = 1
	}
	c.setInt(name, n)
}

// assemble returns the script made of the configuration, the functions of
// the library that the files call (directly or through one another), and the
// files, in order, with comments and indentation dropped.
func assemble(c *config, files ...string) (string, error) {
	return assembleHead(c, "", files...)
}

// assembleHead is assemble with the file head ("": none), which calls no
// function of the library, before the library's functions: the shell
// runs it before it has parsed them.
func assembleHead(c *config, head string, files ...string) (string, error) {
	if c.err != nil {
		return "", c.err
	}
	var body strings.Builder
	for _, f := range files {
		body.WriteString(source(f))
	}
	lib := library().closure(body.String())
	// A job id's form, from its one definition (jobdir), for the
	// functions that look for ids: bg_idpat as a shell pattern, bg_idre
	// as a basic regular expression.
	for _, v := range []struct{ name, value string }{{"bg_idpat", jobdir.IDPattern()}, {"bg_idre", jobdir.IDRegexp()}} {
		if strings.Contains(lib, "$"+v.name) || strings.Contains(body.String(), "$"+v.name) {
			c.set(v.name, v.value)
		}
	}
	if c.err != nil {
		return "", c.err
	}
	var b strings.Builder
	b.WriteString(c.b.String())
	if head != "" {
		h := source(head)
		if len(library().called(h)) > 0 {
			panic("shellgen: " + head + " calls a function of the library")
		}
		b.WriteString(h)
	}
	b.WriteString(lib)
	b.WriteString(body.String())
	return b.String(), nil
}

// source returns the script file name, minified.
func source(name string) string {
	b, err := shFiles.ReadFile("sh/" + name)
	if err != nil {
		panic("shellgen: missing embedded script " + name)
	}
	return minify(string(b))
}

// minify drops comment lines, blank lines and leading indentation. The
// scripts hold no here-document or quoted string whose lines start with
// blanks, so this changes no command.
func minify(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " \t")
		if t == "\n" || t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(t)
	}
	return b.String()
}

// lib is the library, sh/lib/*.sh, split into its functions.
type lib struct {
	names []string            // in the order of the files (by name), then in file order
	file  map[string]string   // name -> the file that defines it, e.g. "time.sh"
	text  map[string]string   // name -> minified definition
	calls map[string][]string // name -> the functions its definition calls
}

// funcName returns the name of the library function whose definition
// line ("bg_name() {" and its newline) is line, or "" when it is none.
func funcName(line string) string {
	name, ok := strings.CutSuffix(line, "() {\n")
	if !ok || len(name) <= len("bg_") || !strings.HasPrefix(name, "bg_") {
		return ""
	}
	for i := len("bg_"); i < len(name); i++ {
		if c := name[i]; c != '_' && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return ""
		}
	}
	return name
}

// library is sh/lib/*.sh, parsed once, on the first script made (not at
// every start of the binary: bgjob --version makes none).
var library = sync.OnceValue(func() lib {
	ents, err := shFiles.ReadDir("sh/lib")
	if err != nil {
		panic("shellgen: missing embedded sh/lib: " + err.Error())
	}
	l := lib{file: map[string]string{}, text: map[string]string{}}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sh") {
			continue
		}
		b, err := shFiles.ReadFile("sh/lib/" + e.Name())
		if err != nil {
			panic("shellgen: " + err.Error())
		}
		l.parse(e.Name(), string(b))
	}
	l.calls = map[string][]string{}
	for _, name := range l.names {
		l.calls[name] = l.called(l.text[name])
	}
	return l
})

// parse adds the functions of the library file named file, whose text is
// src.
func (l *lib) parse(file, src string) {
	for at := 0; at < len(src); {
		line, _, _ := strings.Cut(src[at:], "\n")
		def := src[at:min(at+len(line)+1, len(src))]
		at0 := at
		at += len(def)
		name := funcName(def)
		if name == "" {
			continue
		}
		end := strings.Index(src[at0:], "\n}\n")
		if end < 0 {
			panic("shellgen: lib/" + file + ": function " + name + " does not end with a line holding }")
		}
		if f, ok := l.file[name]; ok {
			panic("shellgen: lib/" + file + ": function " + name + " is defined in lib/" + f + " too")
		}
		l.names = append(l.names, name)
		l.file[name] = file
		l.text[name] = minify(src[at0 : at0+end+3])
	}
}

// need returns the names of the functions that text calls, directly or
// through one another, in the library's order.
func (l lib) need(text string) []string {
	need := map[string]bool{}
	queue := l.called(text)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if !need[name] {
			need[name] = true
			queue = append(queue, l.calls[name]...)
		}
	}
	var names []string
	for _, name := range l.names {
		if need[name] {
			names = append(names, name)
		}
	}
	return names
}

// called returns the library functions text names as words, in one pass
// over text: a word bg_... that is not a variable of the same name (not
// bg_x= nor $bg_x nor ${bg_x}) and is a function of the library.
func (l lib) called(text string) []string {
	var names []string
	for i := 0; ; {
		j := strings.Index(text[i:], "bg_")
		if j < 0 {
			return names
		}
		j += i
		k := j + len("bg_")
		for k < len(text) && isIdent(text[k]) {
			k++
		}
		i = k
		if j > 0 && (isIdent(text[j-1]) || text[j-1] == '$' || text[j-1] == '{') || k < len(text) && text[k] == '=' {
			continue
		}
		if _, ok := l.text[text[j:k]]; ok {
			names = append(names, text[j:k])
		}
	}
}

// closure returns the definitions of the functions that text calls,
// directly or through one another, in the library's order.
func (l lib) closure(text string) string {
	var b strings.Builder
	for _, name := range l.need(text) {
		b.WriteString(l.text[name])
	}
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// MaxArgScript is the longest argument a runtime passes a script in
// ("sh -c SCRIPT", or over SSH the quoted command the server runs); a
// longer one goes through Bootstrap.
const MaxArgScript = 100 << 10

// Bootstrap returns the script a runtime runs as "sh -c BOOTSTRAP sh N"
// for a script of N bytes longer than MaxArgScript, writing the script to
// its stdin before the script's own stdin.
func Bootstrap() string { return source("bootstrap.sh") }
