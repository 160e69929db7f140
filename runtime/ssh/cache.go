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
	if c == nil {
		return
	}
	switch strings.ToLower(v.get("canonicalizehostname")) {
	case "", "false", "no":
	default:
		return // the answer depends on DNS
	}
	e := cacheEntry{Inputs: k.inputs, Values: v, Env: map[string]string{}}
	seen := map[string]bool{}
	add := func(path string) {
		if !seen[path] {
			seen[path] = true
			e.Stamps = append(e.Stamps, stampOf(path))
		}
	}
	add(k.inputs[1]) // the ssh binary
	add("/etc/passwd")
	pat := configPatterns()
	for _, f := range files {
		add(f)
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if pat.matchUncache.MatchString(line) {
				return
			}
			for _, m := range pat.envRef.FindAllStringSubmatch(line, -1) {
				e.Env[m[1]] = os.Getenv(m[1])
			}
			m := pat.includeLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for _, pat := range strings.Fields(m[2]) {
				pat = strings.Trim(pat, `"`)
				if pat == "~" || strings.HasPrefix(pat, "~/") {
					pat = homeDir() + pat[1:]
				}
				cands := []string{pat}
				if !filepath.IsAbs(pat) {
					// Relative to ~/.ssh in a user file, /etc/ssh in a
					// system one: watch both.
					cands = []string{filepath.Join(homeDir(), ".ssh", pat), filepath.Join("/etc/ssh", pat)}
				}
				for _, p := range cands {
					switch {
					case strings.ContainsAny(filepath.Dir(p), `*?[`):
						return // a glob over directories: not worth tracking
					case strings.ContainsAny(p, `*?[`):
						add(filepath.Dir(p)) // a file added or removed there
					default:
						add(p)
					}
				}
			}
		}
	}
	for _, s := range e.Stamps {
		if !s.Missing && time.Unix(0, s.ModTime).After(started.Add(-racyWindow)) {
			return
		}
	}
	b, err := json.Marshal(e)
	if err != nil || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), k.file) != nil {
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
