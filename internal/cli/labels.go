package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/bgjob/bgjob/jobdir"
)

// labelHelp says which labels run --label accepts and the filters take.
const labelHelp = "KEY=VALUE (repeatable): KEY 1-64 letters, digits or ._@:+- starting with a letter or digit, not a field of meta.json; VALUE up to 256 bytes of text"

// labelFilter adds --label, the filter of ls, stop, wait, events and
// prune, to f: its values go to *labels.
func labelFilter(f *pflag.FlagSet, labels *[]string) {
	f.StringArrayVar(labels, "label", nil, "only jobs with this label, "+labelHelp+"; all given must match")
}

// parseLabels turns the values of --label into labels (nil for none),
// refusing, with exit 2, a label jobdir does not accept or a key given
// twice.
func parseLabels(given []string) (map[string]string, error) {
	if len(given) == 0 {
		return nil, nil
	}
	labels := map[string]string{}
	for _, s := range given {
		k, v, err := jobdir.ParseLabel(s)
		if err != nil {
			return nil, usageError("--label: %v", err)
		}
		if _, ok := labels[k]; ok {
			return nil, usageError("--label: %s is given twice", k)
		}
		labels[k] = v
	}
	return labels, nil
}

// labelsText is labels as status shows them: KEY=VALUE, by key, comma
// separated ("" for none).
func labelsText(labels map[string]string) string {
	kv := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+"="+labels[k])
	}
	return strings.Join(kv, ", ")
}

// ulimitsText is limits as status shows them: NAME=SOFT:HARD, comma
// separated ("" for none).
func ulimitsText(limits []jobdir.Ulimit) string {
	s := make([]string, len(limits))
	for i, u := range limits {
		s[i] = u.String()
	}
	return strings.Join(s, ", ")
}

// parseUlimits turns the values of run --ulimit into limits, refusing
// one jobdir does not accept (an unknown name among them) with exit 2.
func parseUlimits(given []string) ([]jobdir.Ulimit, error) {
	var limits []jobdir.Ulimit
	for _, s := range given {
		u, err := jobdir.ParseUlimit(s)
		if err != nil {
			return nil, usageError("--ulimit: %v", err)
		}
		limits = append(limits, u)
	}
	return limits, nil
}
