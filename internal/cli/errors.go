package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// errorKind returns the kind of err for --json, so that a program tells
// "no such job" from a timeout or an unreachable host without reading the
// message (wait's exit status is the job's own, so 1 serves them all):
// "usage" (how bgjob was called), the library's kind (bgjob.KindOf),
// "timeout", "host_key", "unreachable" (the host did not answer), or
// "error".
func errorKind(err error) string {
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 2 || isCobraUsage(err) {
		return "usage"
	}
	switch k := bgjob.KindOf(err); k {
	case bgjob.KindOther:
	case bgjob.KindNoAnswer:
		return "unreachable"
	default:
		return string(k)
	}
	if full != nil {
		if k := full.ErrorKind(err); k != "" {
			return k
		}
	}
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &op), errors.As(err, &dns):
		return "unreachable"
	}
	return "error"
}

// errorJSON is the --json form of an error: {"error": "...", "kind": "..."}.
// A verb whose document says what it did before it failed embeds it, so
// that --json prints one value carrying both (see shownError).
type errorJSON struct {
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// errorJSONOf is the --json form of err; empty for nil.
func errorJSONOf(err error) errorJSON {
	if err == nil {
		return errorJSON{}
	}
	return errorJSON{Error: err.Error(), Kind: errorKind(err)}
}

// printErrorJSON prints err's --json form on w, unless a verb's document
// already carried it.
func printErrorJSON(w io.Writer, err error) {
	var shown *shownError
	if errors.As(err, &shown) {
		return
	}
	printJSON(w, errorJSONOf(err))
}

// shownError is an error that a verb's --json document carries (its
// errorJSON embedded): Run says it on stderr only.
type shownError struct{ err error }

func (e *shownError) Error() string { return e.err.Error() }
func (e *shownError) Unwrap() error { return e.err }

// flagError is every command's answer to a flag it cannot parse: a usage
// error that suggests the flag meant (--tiemout: --timeout).
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usageError("%v", err)
	}
	if s := closestFlag(cmd, name); s != "" {
		return usageError("%v (did you mean --%s?)", err, s)
	}
	return usageError("%v", err)
}

// closestFlag returns the flag of cmd nearest to name: at most two edits
// away (a swap counts one), or name a prefix of it; "" when none is.
func closestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// needArgs accepts min to max arguments (max < 0: any number) and says
// what is missing in the command's words: "wait needs a job id or name".
func needArgs(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return usageError("%s needs %s", cmd.Name(), what)
		case max >= 0 && len(args) > max:
			return usageError("%s takes at most %d argument(s), got %d: %s", cmd.Name(), max, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// helpHint is the hint after a usage error: the help of the command that
// failed.
func helpHint(cmd *cobra.Command) string {
	if cmd == nil {
		return "see 'bgjob --help'"
	}
	return fmt.Sprintf("see '%s --help'", cmd.CommandPath())
}

// elsewhere returns the hint for a job err says is not in the workspace
// looked in, when it is in another workspace of the same root on the same
// host: "job web is in workspace other: bgjob -w other status ...", with
// the host and root looked on (a.where), so that it can be pasted. ""
// when there is none, or with several hosts. It asks the host once more,
// and only then: a failure says nothing.
func (a *app) elsewhere(ctx context.Context, err error, verb string) string {
	if a.many() {
		return ""
	}
	var refs []string
	ws := ""
	for _, e := range notFound(err) {
		if !slices.Contains(refs, e.Ref) {
			refs = append(refs, e.Ref)
		}
		ws = e.Workspace
	}
	if len(refs) == 0 {
		return ""
	}
	res := bgjob.Each(ctx, a.fleet(a.limit(0)), func(ctx context.Context, _ string, c *bgjob.Client) (string, error) {
		found := ""
		_, err := c.ListFunc(ctx, bgjob.ListOptions{AllWorkspaces: true}, func(j jobdir.Job) error {
			if j.Workspace != ws && found == "" && (slices.Contains(refs, j.ID) || j.Name != "" && slices.Contains(refs, j.Name)) {
				ref := j.ID
				if slices.Contains(refs, j.Name) {
					ref = j.Name
				}
				found = fmt.Sprintf("job %s is in workspace %s: %s %s ...; %s lists the jobs of every workspace", ref, j.Workspace, a.where("-w", j.Workspace), verb, a.where("ls", "-A"))
			}
			return nil
		})
		return found, err
	})
	return res[0].Value
}

// where is the command line of bgjob on the host and root it works on
// (-H HOST, --root ROOT, each when given, by flag or environment), with
// more arguments after them, each word quoted for the shell.
func (a *app) where(more ...string) string {
	argv := []string{"bgjob"}
	if a.host != "" {
		argv = append(argv, "-H", a.host)
	}
	if a.root != "" {
		argv = append(argv, "--root", a.root)
	}
	argv = append(argv, more...)
	if q, err := shellgen.QuoteArgv(argv); err == nil {
		return q
	}
	return strings.Join(argv, " ")
}

// notFound returns the errors in err of jobs not found in a workspace
// (bgjob.Error with a Ref and a Workspace).
func notFound(err error) []*bgjob.Error {
	switch x := err.(type) {
	case *bgjob.Error:
		if x.Kind == bgjob.KindNotFound && x.Ref != "" && x.Workspace != "" {
			return []*bgjob.Error{x}
		}
		return notFound(x.Err)
	case interface{ Unwrap() []error }:
		var all []*bgjob.Error
		for _, e := range x.Unwrap() {
			all = append(all, notFound(e)...)
		}
		return all
	case interface{ Unwrap() error }:
		return notFound(x.Unwrap())
	}
	return nil
}
