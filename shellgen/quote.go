package shellgen

import (
	"errors"
	"strings"
)

// ErrNUL is returned when a string holds a NUL byte, which no POSIX shell
// word can carry.
var ErrNUL = errors.New("string contains a NUL byte, which a shell cannot pass")

// Quote returns s as one shell word in single quotes, exactly preserving
// every byte but NUL, which it refuses.
func Quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", ErrNUL
	}
	return quote(s), nil
}

// quote single-quotes s; the caller has checked it holds no NUL.
func quote(s string) string {
	if s != "" && !reserved(s) && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteArgv quotes each word of argv and joins them with spaces.
func QuoteArgv(argv []string) (string, error) {
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := Quote(a)
		if err != nil {
			return "", err
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// reserved reports whether s is a keyword of POSIX sh, bash or busybox sh
// made of safe characters: as the first word of a command it would not run
// a command of that name, so it is quoted too.
func reserved(s string) bool {
	switch s {
	case "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until", "while",
		"function", "select", "time", "coproc":
		return true
	}
	return false
}
