package cli

import (
	"embed"
	"strings"
)

// helpFiles are the long help texts of the verbs, one file a verb,
// help/VERB.txt (help/bgjob.txt for bgjob itself): the text cobra shows
// above the usage, then, after a line "Examples:", the examples, as help
// shows them.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help returns the long help and the examples of verb, from its file.
func help(verb string) (long, example string) {
	b, err := helpFiles.ReadFile("help/" + verb + ".txt")
	if err != nil {
		// Every verb's file is embedded: a name without one is a
		// mistake in this package, which any test of the command finds.
		panic(err)
	}
	long, example, _ = strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n\nExamples:\n")
	return long, example
}
