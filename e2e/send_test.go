package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/cli"
)

// TestSendReportsDelivered: a send that times out says how much of its
// input reached the job's stdin, which the job then reads: before, "did
// not take the input" hid the 65,536 bytes the job counted later, locally
// and over SSH.
func TestSendReportsDelivered(t *testing.T) {
	t.Parallel()
	for _, tc := range localAndSSH(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			gate := filepath.Join(t.TempDir(), "go")
			if code, _, errs := bgjob(ctx, append(tc.flags, "run", "-q", "--stdin", "-n", "late", "--", "while [ ! -e "+gate+" ]; do sleep 0.05; done; wc -c")...); code != 0 {
				t.Fatalf("run: %s", errs)
			}
			var out, errb strings.Builder
			code := cli.Run(ctx, append(tc.flags, "send", "--timeout", "1s", "late", "-"), strings.NewReader(strings.Repeat("x", 2_000_000)), &out, &errb)
			m := regexp.MustCompile(`\((\d+) of 2000000 bytes delivered\)`).FindStringSubmatch(errb.String())
			if code != 1 || m == nil {
				t.Fatalf("send --timeout 1s of 2 MB: exit %d, stderr %q; want 1 and how many bytes were delivered", code, errb.String())
			}
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if code, _, errs := bgjob(ctx, append(tc.flags, "send", "--eof", "late")...); code != 0 {
				t.Fatalf("send --eof: %s", errs)
			}
			if code, _, errs := bgjob(ctx, append(tc.flags, "wait", "--timeout", "60s", "late")...); code != 0 {
				t.Fatalf("wait: exit %d: %s", code, errs)
			}
			_, got, _ := bgjob(ctx, append(tc.flags, "logs", "late")...)
			if strings.TrimSpace(got) != m[1] || m[1] == "0" {
				t.Errorf("the job read %q bytes, the send said %s were delivered (want the same, not 0)", strings.TrimSpace(got), m[1])
			}
		})
	}
}
