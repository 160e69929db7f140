package bgjob_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/runtime/local"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// A log truncated between the read's byte count (wc -c) and its read of
// the bytes: the record stream stays in step (the read used to wait for
// bytes that never came, holding the reader's cursor lock), no byte that
// is not the log's is printed, and the range says the log was rewound.
// A wc(1) put first on PATH truncates the log once it has counted it;
// locally the scripts read (local.CheckEnv off: runtime/local's own reads
// are TestChunksOfALogShrunkUnderTheRead's).
func TestLogsLogShrunkUnderTheRead(t *testing.T) {
	t.Setenv(local.CheckEnv, "off")
	shim := t.TempDir()
	wc, err := exec.LookPath("wc")
	if err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(shim, "armed")
	// The flag file names the log; the shim empties it once.
	script := fmt.Sprintf(`#!/bin/sh
out=$(%s "$@") || exit
printf '%%s\n' "$out"
if [ -s %[2]s ]; then
	f=$(cat %[2]s)
	sz=$(%[1]s -c <"$f")
	case " $(echo $out) " in *" $sz "*) : >"$f"; rm -f %[2]s ;; esac
fi
`, wc, flag)
	if err := os.WriteFile(filepath.Join(shim, "wc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Over SSH the host's sessions find the shim first on PATH too.
	t.Setenv("SSH_AUTH_SOCK", "")
	srv := sshtest.Start(t, "SetEnv PATH="+shim+":"+os.Getenv("PATH"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "shrink"); err != nil {
		t.Fatal(err)
	}
	if err := srv.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	rt, err := sshrt.Dial(context.Background(), "shrink", sshrt.Options{ConfigFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	t.Setenv("PATH", shim+":"+os.Getenv("PATH"))
	ctx := context.Background()
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	seq := b.String()
	for _, tc := range []struct {
		name string
		rt   bgjob.Runtime
		cmd  string
	}{
		{"local ended", local.New(), `seq 1 20000`},
		{"local running", local.New(), `seq 1 20000; sleep 60`},
		{"ssh ended", rt, `seq 1 20000`},
		{"ssh running", rt, `seq 1 20000; sleep 60`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := bgjob.NewClient(tc.rt, t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			j, err := c.Run(ctx, bgjob.Spec{Argv: []string{tc.cmd}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Remove(ctx, []string{j.ID}, bgjob.RemoveOptions{Force: true})
			log := filepath.Join(j.Dir, "stdout.log")
			if !eventually(time.Minute, func() bool {
				b, _ := os.ReadFile(log)
				return bytes.HasSuffix(b, []byte("\n20000\n"))
			}) {
				t.Fatal("the job did not write its log")
			}
			if err := os.WriteFile(flag, []byte(log), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			res, err := c.Logs(rctx, j.ID, bgjob.LogOptions{Cursor: &bgjob.Cursor{}, Stdout: true, MaxBytes: 1 << 20}, &out, &out)
			if _, armed := os.Stat(flag); armed == nil {
				t.Fatal("the log was not truncated under the read")
			}
			if err != nil {
				t.Fatalf("logs --new over a log truncated under it: %v", err)
			}
			if !strings.HasPrefix(seq, out.String()) {
				t.Errorf("logs --new printed %d bytes, %q...: not the log's", out.Len(), out.Bytes()[:min(out.Len(), 40)])
			}
			if len(res.Ranges) != 1 || !res.Ranges[0].Rewound {
				t.Errorf("ranges %+v: want the stdout range rewound", res.Ranges)
			}
		})
	}
}
