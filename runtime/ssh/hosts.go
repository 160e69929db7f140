package ssh

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// maxIncludeDepth is how deep Include directives are followed, as OpenSSH.
const maxIncludeDepth = 16

// ConfigHosts returns the names of the Host lines of the ssh configuration
// Dial would read with configFile (see Options.ConfigFile) and of the files
// they Include, in the order they appear, each once. Patterns (with *, ?
// or a leading !) name no one host and are left out, as are Match blocks.
// Files that cannot be read are skipped: the list is for completion and
// suggestions.
func ConfigHosts(configFile string) []string {
	files := []string{configFile}
	if configFile == "" {
		files = []string{filepath.Join(homeDir(), ".ssh", "config"), "/etc/ssh/ssh_config"}
	}
	var names []string
	seen := map[string]bool{}
	for _, f := range files {
		system := strings.HasPrefix(f, "/etc/ssh/")
		hostLines(f, system, 0, func(name string) {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		})
	}
	return names
}

// hostLines calls add with each name of the Host lines of file and of the
// files it includes.
func hostLines(file string, system bool, depth int, add func(string)) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		keyword, args := configLine(sc.Text())
		switch strings.ToLower(keyword) {
		case "host":
			for _, a := range args {
				if !strings.ContainsAny(a, "*?!") {
					add(a)
				}
			}
		case "include":
			if depth+1 >= maxIncludeDepth {
				continue
			}
			for _, pattern := range args {
				for _, inc := range includeFiles(pattern, system) {
					hostLines(inc, system, depth+1, add)
				}
			}
		}
	}
}

// configLine splits an ssh_config line into its keyword and arguments:
// "Keyword arg..." or "Keyword=arg...", double quotes grouping words, #
// starting a comment.
func configLine(line string) (string, []string) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", nil
	}
	keyword, rest, _ := strings.Cut(line, "=")
	if i := strings.IndexAny(line, " \t"); i >= 0 && i < len(keyword) {
		keyword, rest = line[:i], strings.TrimPrefix(strings.TrimLeft(line[i:], " \t"), "=")
	}
	var args []string
	var word strings.Builder
	quoted, inWord := false, false
	for _, r := range rest {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t'):
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		case !quoted && r == '#' && !inWord:
			return keyword, args
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		args = append(args, word.String())
	}
	return keyword, args
}

// includeFiles expands an Include argument: ~ is the home directory, a
// relative path is under ~/.ssh (or /etc/ssh in the system file), and
// wildcards match files in sorted order.
func includeFiles(pattern string, system bool) []string {
	switch {
	case pattern == "~" || strings.HasPrefix(pattern, "~/"):
		pattern = homeDir() + pattern[1:]
	case !filepath.IsAbs(pattern) && system:
		pattern = filepath.Join("/etc/ssh", pattern)
	case !filepath.IsAbs(pattern):
		pattern = filepath.Join(homeDir(), ".ssh", pattern)
	}
	files, _ := filepath.Glob(pattern)
	return files
}
