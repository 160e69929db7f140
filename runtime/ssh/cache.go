package ssh

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// configCache keeps "ssh -G" answers on disk, one JSON file per question
// (ssh binary, arguments, uid, machine). An answer is used only while
// every file it depends on is unchanged: the ssh binary, /etc/passwd (home
// directory and user name, for ~, %d and %u), the config files
// ssh read (it names them under -v), the ones it would read if they
// existed, the files and directories their Include lines name, and the
// environment variables they reference. Answers that depend on more
// (Match exec or localnetwork, CanonicalizeHostname) are not kept. A nil
// *configCache keeps nothing.
type configCache struct {
	dir string
}

// cacheVersion is the version of the cache's entries: an entry of
// another is not read. Its time limits are in ssh.go's table.
const cacheVersion = "1"

func newConfigCache(dir string) *configCache {
	if dir == "" {
		return nil
	}
	return &configCache{dir: filepath.Join(dir, "ssh-config")}
}

// cacheEntry is one cached answer.
type cacheEntry struct {
	Inputs []string          `json:"inputs"`
	Stamps []stamp           `json:"stamps"`
	Env    map[string]string `json:"env,omitempty"`
	Values values            `json:"values"`
}

// stamp is what a file looked like when the answer was cached.
type stamp struct {
	Path    string `json:"path"`
	Missing bool   `json:"missing,omitempty"`
	ModTime int64  `json:"mtime_ns,omitempty"`
	Size    int64  `json:"size,omitempty"`
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{Path: path, Missing: true}
	}
	return stamp{Path: path, ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}
}

type cacheKey struct {
	file   string
	inputs []string
}

// key names the entry for running binary with args.
func (c *configCache) key(binary string, args []string) cacheKey {
	if c == nil {
		return cacheKey{}
	}
	host, _ := os.Hostname()
	// Not homeDir(): looking up the user costs a cold process more than
	// the rest of a cache hit; /etc/passwd is stamped instead.
	inputs := append([]string{cacheVersion, binary, strconv.Itoa(os.Getuid()), host}, args...)
	sum := sha256.Sum256([]byte(strings.Join(inputs, "\x00")))
	return cacheKey{file: filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json"), inputs: inputs}
}

// get returns the cached answer for k if it is still valid.
func (c *configCache) get(k cacheKey) (values, bool) {
	if c == nil {
		return nil, false
	}
	b, err := os.ReadFile(k.file)
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || !slices.Equal(e.Inputs, k.inputs) || e.Values == nil {
		return nil, false
	}
	for _, s := range e.Stamps {
		if stampOf(s.Path) != s {
			return nil, false
		}
	}
	for name, val := range e.Env {
		if os.Getenv(name) != val {
			return nil, false
		}
	}
	return e.Values, true
}

// configPatterns are compiled when a cache entry is first stored, not at
// every bgjob start (package init runs for every verb, local ones too).
var configPatterns = sync.OnceValue(func() (p struct{ envRef, includeLine, matchUncache *regexp.Regexp }) {
	p.envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	p.includeLine = regexp.MustCompile(`(?i)^\s*include(\s*=\s*|\s+)(.*)$`)
	p.matchUncache = regexp.MustCompile(`(?i)^\s*match\b.*\b(exec|localnetwork)\b`)
	return p
})

// put stores v, the answer ssh started computing at started after reading
// files. Failing to write is not an error: the next call asks ssh again.
func (c *configCache) put(k cacheKey, v values, files []string, started time.Time) {
	if c == nil || dependsOnDNS(v) {
		return
	}
	deps := dependencies{seen: map[string]bool{}, env: map[string]string{}}
	deps.add(k.inputs[1]) // the ssh binary
	deps.add("/etc/passwd")
	for _, f := range files {
		if !deps.addConfig(f) {
			return
		}
	}
	if deps.changedSince(started.Add(-racyWindow)) {
		return
	}
	c.write(k.file, cacheEntry{Inputs: k.inputs, Values: v, Env: deps.env, Stamps: deps.stamps})
}

// dependsOnDNS reports whether the answer v depends on DNS
// (CanonicalizeHostname), which no stamp can follow.
func dependsOnDNS(v values) bool {
	switch strings.ToLower(v.get("canonicalizehostname")) {
	case "", "false", "no":
		return false
	}
	return true
}

// dependencies are what a cached answer depends on: the files it is
// stamped with, each once, and the environment variables the config files
// reference, with their values.
type dependencies struct {
	stamps []stamp
	seen   map[string]bool
	env    map[string]string
}

// add stamps path, unless it is already.
func (d *dependencies) add(path string) {
	if !d.seen[path] {
		d.seen[path] = true
		d.stamps = append(d.stamps, stampOf(path))
	}
}

// addConfig adds config file f, the environment variables it references
// and the files its Include lines name. It reports false when the answer
// depends on what no stamp follows (Match exec or localnetwork, an Include
// that globs over directories): it is not to be kept then. A file that
// cannot be read is stamped only.
func (d *dependencies) addConfig(f string) bool {
	d.add(f)
	b, err := os.ReadFile(f)
	if err != nil {
		return true
	}
	pat := configPatterns()
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if pat.matchUncache.MatchString(line) {
			return false
		}
		for _, m := range pat.envRef.FindAllStringSubmatch(line, -1) {
			d.env[m[1]] = os.Getenv(m[1])
		}
		m := pat.includeLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, arg := range strings.Fields(m[2]) {
			if !d.addInclude(strings.Trim(arg, `"`)) {
				return false
			}
		}
	}
	return true
}

// addInclude adds what one argument of an Include line names: the file, or
// for a glob the directory where a file may be added or removed. It
// reports false for a glob over directories, which is not worth tracking.
func (d *dependencies) addInclude(arg string) bool {
	if arg == "~" || strings.HasPrefix(arg, "~/") {
		arg = homeDir() + arg[1:]
	}
	cands := []string{arg}
	if !filepath.IsAbs(arg) {
		// Relative to ~/.ssh in a user file, /etc/ssh in a system one:
		// watch both.
		cands = []string{filepath.Join(homeDir(), ".ssh", arg), filepath.Join("/etc/ssh", arg)}
	}
	for _, p := range cands {
		switch {
		case strings.ContainsAny(filepath.Dir(p), `*?[`):
			return false
		case strings.ContainsAny(p, `*?[`):
			d.add(filepath.Dir(p)) // a file added or removed there
		default:
			d.add(p)
		}
	}
	return true
}

// changedSince reports whether a stamped file was modified after t: it may
// have changed under ssh as it read it.
func (d *dependencies) changedSince(t time.Time) bool {
	for _, s := range d.stamps {
		if !s.Missing && time.Unix(0, s.ModTime).After(t) {
			return true
		}
	}
	return false
}

// write stores e in file (tmp + rename), then prunes the cache.
func (c *configCache) write(file string, e cacheEntry) {
	b, err := json.Marshal(e)
	if err != nil || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
		return
	}
	c.prune()
}

// prune removes entries (and abandoned temporary files) nobody wrote for
// cacheMaxAge, such as those of config files that are gone. It runs only
// after an entry is written, which is rare.
func (c *configCache) prune() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, d := range entries {
		if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > cacheMaxAge {
			os.Remove(filepath.Join(c.dir, d.Name()))
		}
	}
}
