package ssh

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// tokens expands ~, ${ENV} and the %-tokens of ssh_config paths.
type tokens struct {
	n, h, p, r string // alias, hostname, port, remote user
}

func newTokens(alias, hostname, port, remoteUser string) tokens {
	return tokens{n: alias, h: hostname, p: port, r: remoteUser}
}

// homeDir is the home directory of the current user from the password
// database, as OpenSSH uses it for ~ and %d; $HOME when that fails.
func homeDir() string {
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	h, _ := os.UserHomeDir()
	return h
}

// expand expands a path: ~, ${ENV} and every %-token.
func (t tokens) expand(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = homeDir() + s[1:]
	}
	if strings.Contains(s, "${") {
		s = os.Expand(s, func(k string) string {
			if k == "$" {
				return "$"
			}
			return os.Getenv(k)
		})
	}
	return t.expandOnly(s, "")
}

// expandAll expands each path of paths; nil when there are none.
func (t tokens) expandAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, t.expand(p))
	}
	return out
}

// expandOnly expands the %-tokens of s whose letters are in only (all of
// them when only is empty), leaving the others as they are.
func (t tokens) expandOnly(s, only string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 == len(s) || (only != "" && !strings.ContainsRune(only, rune(s[i+1]))) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(t.h)
		case 'p':
			b.WriteString(t.p)
		case 'r':
			b.WriteString(t.r)
		case 'n':
			b.WriteString(t.n)
		case 'd':
			b.WriteString(homeDir())
		case 'u':
			if u, err := user.Current(); err == nil {
				b.WriteString(u.Username)
			}
		case 'i':
			b.WriteString(strconv.Itoa(os.Getuid()))
		case 'L', 'l':
			h, _ := os.Hostname()
			if s[i] == 'L' {
				h, _, _ = strings.Cut(h, ".")
			}
			b.WriteString(h)
		case 'C':
			h, _ := os.Hostname()
			sum := sha1.Sum([]byte(h + t.h + t.p + t.r))
			b.WriteString(hex.EncodeToString(sum[:]))
		default:
			b.WriteByte('%')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
