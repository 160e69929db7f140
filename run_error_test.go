package bgjob_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// absent is a host that is not there: every script fails before it writes
// anything, with the runtime's own error, which names the host.
type absent struct{ bgjob.Runtime }

var errAbsent = errors.New("docker://web: no such container")

func (absent) Exec(context.Context, string, io.Reader, io.Writer) error { return errAbsent }

// cutShort is a host whose scripts write a little, then fail.
type cutShort struct{ bgjob.Runtime }

func (cutShort) Exec(_ context.Context, _ string, _ io.Reader, w io.Writer) error {
	io.WriteString(w, "J\tx\n")
	return errAbsent
}

// A runtime's error met before the script wrote anything is the verb's
// error as it is: MCP's job_start said "starting job: docker://web: no
// such container". An error after the script began keeps the verb's words.
func TestRunReturnsTheHostsOwnError(t *testing.T) {
	here := local.New()
	for _, tc := range []struct {
		name string
		rt   bgjob.Runtime
		want string
		spec bgjob.Spec
	}{
		{"absent", absent{here}, errAbsent.Error(), bgjob.Spec{Argv: []string{"true"}}},
		{"after", absent{here}, errAbsent.Error(), bgjob.Spec{Argv: []string{"true"}, After: []string{"x"}}},
		{"cut short", cutShort{here}, "starting job: ", bgjob.Spec{Argv: []string{"true"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := bgjob.NewClient(tc.rt, t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Run(context.Background(), tc.spec)
			if !errors.Is(err, errAbsent) {
				t.Fatalf("err %v, want one that wraps %v", err, errAbsent)
			}
			if tc.want == errAbsent.Error() && err.Error() != tc.want || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err %q, want %q", err, tc.want)
			}
		})
	}
}
