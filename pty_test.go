package bgjob_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestPTYSpec: a PTY job is recorded with its size (80x24 unless given)
// and a stdin; a size without PTY, or out of bounds, is a usage error and
// makes no job.
func TestPTYSpec(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		testneed.Missing(t, "script(1) (util-linux)")
	}
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		spec       bgjob.Spec
		cols, rows int
		err        error
	}{
		{"default size", bgjob.Spec{PTY: true}, 80, 24, nil},
		{"given size", bgjob.Spec{PTY: true, PTYCols: 132, PTYRows: 50}, 132, 50, nil},
		{"size without pty", bgjob.Spec{PTYCols: 132}, 0, 0, bgjob.ErrUsage},
		{"negative", bgjob.Spec{PTY: true, PTYRows: -1}, 0, 0, bgjob.ErrUsage},
		{"too wide", bgjob.Spec{PTY: true, PTYCols: 10001}, 0, 0, bgjob.ErrUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Argv = []string{"true"}
			before, _ := os.ReadDir(root + "/default")
			j, err := c.Run(ctx, tc.spec)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Run: %v, want %v", err, tc.err)
				}
				if after, _ := os.ReadDir(root + "/default"); len(after) != len(before) {
					t.Errorf("a refused Run made a job directory")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !j.PTY || !j.Stdin || j.PTYCols != tc.cols || j.PTYRows != tc.rows {
				t.Errorf("job pty=%v stdin=%v size %dx%d, want a PTY job with a stdin, %dx%d", j.PTY, j.Stdin, j.PTYCols, j.PTYRows, tc.cols, tc.rows)
			}
			// The job ends before TempDir's cleanup removes its files.
			if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
