package shellgen

import (
	"fmt"
	"regexp"
	"strings"
)

// Anatomy returns what Go decided for a generated script, as the goldens
// hold it: the block of variables it writes first (a value that is itself
// a generated script, the launcher's bg_wrapper, shown by its own anatomy
// below), the files of sh/ the script is made of, and the library
// functions it carries, by the file of sh/lib/ that defines them. It
// fails unless the script is exactly that block, then those functions,
// in the library's order, then those files, and the functions are the
// ones the files call, directly or through one another.
func Anatomy(script string) (string, error) {
	var b strings.Builder
	if err := anatomy(&b, "", script); err != nil {
		return "", err
	}
	return b.String(), nil
}

var assignRE = regexp.MustCompile(`^(bg_[a-z0-9_]+)=`)

func anatomy(b *strings.Builder, indent, script string) error {
	rest := script
	var nested []string // name, value of the values that are scripts
	b.WriteString(indent + "# the variables Go writes\n")
	if strings.HasPrefix(rest, "# bgjob wrapper for job ") {
		line, _, _ := strings.Cut(rest, "\n")
		b.WriteString(indent + line + "\n")
		rest = rest[len(line)+1:]
	}
	for {
		m := assignRE.FindStringSubmatch(rest)
		if m == nil || longestFile(rest) != "" {
			// Not Go's: a file's first line (assembleHead).
			break
		}
		end := assignmentEnd(rest, len(m[0]))
		if end < 0 {
			return fmt.Errorf("the assignment of %s does not end", m[1])
		}
		value := rest[len(m[0]):end]
		if v, ok := unquote(value); ok && strings.HasPrefix(v, "# bgjob wrapper for job ") {
			b.WriteString(indent + m[1] + "=<a script, below>\n")
			nested = append(nested, m[1], v)
		} else {
			b.WriteString(indent + rest[:end] + "\n")
		}
		rest = rest[end+1:]
	}
	// A file before the library's functions (assembleHead).
	head := ""
	if m := funcRE().FindStringIndex(rest); m == nil || m[0] != 0 {
		if f := longestFile(rest); f != "" {
			head = source(f)
			rest = rest[len(head):]
		}
	}
	var funcs []string
	for {
		m := funcRE().FindStringSubmatch(rest)
		if m == nil || !strings.HasPrefix(rest, m[0]) {
			break
		}
		text, ok := library().text[m[1]]
		if !ok && longestFile(rest) != "" {
			// A file's own function, its first line.
			break
		}
		if !ok || !strings.HasPrefix(rest, text) {
			return fmt.Errorf("the script defines %s, which is no function of the library as it stands", m[1])
		}
		funcs = append(funcs, m[1])
		rest = rest[len(text):]
	}
	body := rest
	b.WriteString(indent + "# the files\n")
	rest = head + rest
	for rest != "" {
		best := longestFile(rest)
		if best == "" {
			line, _, _ := strings.Cut(rest, "\n")
			return fmt.Errorf("the script goes on with %q, which starts no file of sh/", line)
		}
		b.WriteString(indent + best + "\n")
		rest = rest[len(source(best)):]
	}
	if want := library().need(body); strings.Join(funcs, " ") != strings.Join(want, " ") {
		return fmt.Errorf("the script carries the functions %v, its files call %v", funcs, want)
	}
	b.WriteString(indent + "# the library functions it carries\n")
	for i := 0; i < len(funcs); {
		file := library().file[funcs[i]]
		b.WriteString(indent + file + ":")
		for ; i < len(funcs) && library().file[funcs[i]] == file; i++ {
			b.WriteString(" " + funcs[i])
		}
		b.WriteString("\n")
	}
	for i := 0; i < len(nested); i += 2 {
		b.WriteString(indent + "# " + nested[i] + ", a script\n")
		if err := anatomy(b, indent+"\t", nested[i+1]); err != nil {
			return fmt.Errorf("%s: %w", nested[i], err)
		}
	}
	return nil
}

// longestFile returns the name of the longest file of sh/ that s starts
// with, "" for none.
func longestFile(s string) string {
	best := ""
	ents, err := shFiles.ReadDir("sh")
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		if name := e.Name(); strings.HasSuffix(name, ".sh") && strings.HasPrefix(s, source(name)) && len(source(name)) > len(sourceOr(best)) {
			best = name
		}
	}
	return best
}

// assignmentEnd returns the index of the newline that ends the
// assignment in s whose value starts at i, or -1: a value is words Quote
// wrote, so a newline inside single quotes is part of it.
func assignmentEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '\\':
			i++
		case '\n':
			return i
		}
	}
	return -1
}

// unquote returns the string a value Quote wrote stands for.
func unquote(v string) (string, bool) {
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return "", false
	}
	return strings.ReplaceAll(v[1:len(v)-1], `'\''`, "'"), true
}

// sourceOr is source, or "" for no file.
func sourceOr(name string) string {
	if name == "" {
		return ""
	}
	return source(name)
}
