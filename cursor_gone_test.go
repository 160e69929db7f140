package bgjob_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
)

// TestCursorReaderGoneMidRead: a read with a cursor whose writer fails
// mid-read (its reader went, as `| head` leaves) moves the cursor over
// what the writer took, before Logs returns, locally with the read made
// in Go and with the script (the Go read used to end before the
// reader's last report was in the cursor about 40% of the time).
func TestCursorReaderGoneMidRead(t *testing.T) {
	for _, check := range []string{"", "off"} {
		t.Run("check "+check, func(t *testing.T) {
			t.Setenv(local.CheckEnv, check)
			c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"seq 1 300000; sleep 60"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{})
			log := filepath.Join(j.Dir, "stdout.log")
			if !eventually(time.Minute, func() bool {
				b, _ := os.ReadFile(log)
				return strings.HasSuffix(string(b), "\n300000\n")
			}) {
				t.Fatal("the job did not write its log")
			}
			for round := 1; round <= 5; round++ {
				w := &goneWriter{left: 30}
				_, err := c.Logs(ctx, j.ID, bgjob.LogOptions{Cursor: &bgjob.Cursor{}, Stdout: true}, w, w)
				if err == nil {
					t.Fatalf("round %d: the read ended well though its writer failed", round)
				}
				b, err := os.ReadFile(filepath.Join(j.Dir, "cursor-default.stdout"))
				if err != nil {
					t.Fatalf("round %d: no cursor: %v", round, err)
				}
				off, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
				if want := strconv.Itoa(30 * round); off != want {
					t.Fatalf("round %d: the cursor is at %s, want %s (what the writers took)", round, off, want)
				}
			}
		})
	}
}

// goneWriter takes left bytes, then fails as a pipe whose reader went.
type goneWriter struct{ left int }

func (w *goneWriter) Write(p []byte) (int, error) {
	if len(p) <= w.left {
		w.left -= len(p)
		return len(p), nil
	}
	n := w.left
	w.left = 0
	return n, errors.New("broken pipe")
}
