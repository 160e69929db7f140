package jobdir

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ErrBadLabel is wrapped by the errors of ValidateLabel.
var ErrBadLabel = errors.New("invalid label")

// MaxLabelValue is the most bytes a label's value may have.
const MaxLabelValue = 256

// ValidateLabel checks a label as meta.json records it: a key made like a
// name (ValidateName: 1-64 letters, digits or ._@:+-, starting with a
// letter or digit) that is not the name of a field of meta.json (scripts
// find a job's name by its "name":"…" in the line), and a value of at most
// MaxLabelValue bytes of UTF-8 text without control characters ("" too).
func ValidateLabel(key, value string) error {
	if !isName(key) {
		return fmt.Errorf("%w: key %q: use 1-64 letters, digits or ._@:+- starting with a letter or digit", ErrBadLabel, key)
	}
	if metaFields()[key] {
		return fmt.Errorf("%w: key %q is a field of meta.json: give another key", ErrBadLabel, key)
	}
	if len(value) > MaxLabelValue {
		return fmt.Errorf("%w: %s: the value is %d bytes, more than %d", ErrBadLabel, key, len(value), MaxLabelValue)
	}
	if !utf8.ValidString(value) || strings.IndexFunc(value, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w: %s: the value must be UTF-8 text without control characters", ErrBadLabel, key)
	}
	return nil
}

// ParseLabel splits KEY=VALUE (the first "=" ends the key) and checks it
// with ValidateLabel.
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("%w: %q: want KEY=VALUE", ErrBadLabel, s)
	}
	return key, value, ValidateLabel(key, value)
}

// HasLabels reports whether labels holds every pair of want (an empty
// want: any labels).
func HasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// metaFields are the JSON names of Job's fields, meta.json's among them:
// no label key is one. Made when first asked for: a run with a label,
// not every start of bgjob.
var metaFields = sync.OnceValue(func() map[string]bool { return jsonNames(reflect.TypeFor[Job](), map[string]bool{}) })

func jsonNames(t reflect.Type, names map[string]bool) map[string]bool {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			jsonNames(f.Type, names)
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// Ulimit is one resource limit of a job (run --ulimit), as Docker has
// it: Name is one of UlimitNames, Soft and Hard are in the kernel's
// units (bytes, seconds for cpu, a count for nofile and nproc), -1
// (Unlimited) for no limit.
type Ulimit struct {
	Name string `json:"name"`
	Soft int64  `json:"soft"`
	Hard int64  `json:"hard"`
}

// Unlimited is a Ulimit's Soft or Hard that sets no limit.
const Unlimited = -1

// UlimitNames are the limits a job may set, Docker's names.
var UlimitNames = []string{"as", "core", "cpu", "fsize", "memlock", "nofile", "nproc", "stack"}

// ErrBadUlimit is wrapped by the errors of ParseUlimit and Ulimit.Validate.
var ErrBadUlimit = errors.New("invalid ulimit")

// ParseUlimit reads Docker's NAME=SOFT[:HARD] (HARD: SOFT when not given;
// each a number or "unlimited", -1 too) and checks it (Validate).
func ParseUlimit(s string) (Ulimit, error) {
	name, vals, ok := strings.Cut(s, "=")
	if !ok {
		return Ulimit{}, fmt.Errorf("%w: %q: want NAME=SOFT[:HARD]", ErrBadUlimit, s)
	}
	soft, hard, twoValues := strings.Cut(vals, ":")
	if !twoValues {
		hard = soft
	}
	u := Ulimit{Name: name}
	var err error
	if u.Soft, err = ulimitValue(soft); err != nil {
		return Ulimit{}, fmt.Errorf("%w: %s: %w", ErrBadUlimit, s, err)
	}
	if u.Hard, err = ulimitValue(hard); err != nil {
		return Ulimit{}, fmt.Errorf("%w: %s: %w", ErrBadUlimit, s, err)
	}
	return u, u.Validate()
}

func ulimitValue(s string) (int64, error) {
	if s == "unlimited" || s == "-1" {
		return Unlimited, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a number of 0 or more, or unlimited", s)
	}
	return n, nil
}

// Validate checks that u names a limit of UlimitNames, with values of 0
// or more (or Unlimited) and a soft limit no higher than the hard one.
func (u Ulimit) Validate() error {
	known := false
	for _, n := range UlimitNames {
		known = known || n == u.Name
	}
	switch {
	case !known:
		return fmt.Errorf("%w: unknown limit %q: want one of %s", ErrBadUlimit, u.Name, strings.Join(UlimitNames, ", "))
	case u.Soft < Unlimited || u.Hard < Unlimited:
		return fmt.Errorf("%w: %s: a limit is 0 or more, or unlimited", ErrBadUlimit, u.Name)
	case u.Hard != Unlimited && (u.Soft == Unlimited || u.Soft > u.Hard):
		return fmt.Errorf("%w: %s: the soft limit is higher than the hard one", ErrBadUlimit, u.Name)
	}
	return nil
}

// String is u as ParseUlimit reads it: NAME=SOFT:HARD.
func (u Ulimit) String() string {
	v := func(n int64) string {
		if n == Unlimited {
			return "unlimited"
		}
		return strconv.FormatInt(n, 10)
	}
	return u.Name + "=" + v(u.Soft) + ":" + v(u.Hard)
}
