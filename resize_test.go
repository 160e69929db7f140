package bgjob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"

	"github.com/bgjob/bgjob/internal/testneed"
)

// TestResize: a PTY job's program gets SIGWINCH and reads the new size on
// its terminal; a job without a PTY is refused with KindNoPTY.
func TestResize(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		testneed.Missing(t, "script(1) (util-linux)")
	}
	c, err := bgjob.NewClient(local.New(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{PTY: true, Shell: "sh", Argv: []string{`trap 'echo "size $(stty size)"' WINCH; echo ready; while :; do sleep 1 & wait $!; done`}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
	out := func() string {
		var b bytes.Buffer
		if _, err := c.Logs(ctx, j.ID, bgjob.LogOptions{}, &b, io.Discard); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if !eventually(10*time.Second, func() bool { return strings.Contains(out(), "ready") }) {
		t.Fatalf("the job never said ready: %q", out())
	}
	if _, err := c.Resize(ctx, j.ID, 101, 33); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return strings.Contains(out(), "size 33 101") }) {
		t.Fatalf("the job did not see 101x33 after Resize: %q", out())
	}

	plain, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, []string{plain.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
	var be *bgjob.Error
	if _, err := c.Resize(ctx, plain.ID, 100, 30); !errors.As(err, &be) || be.Kind != bgjob.KindNoPTY {
		t.Errorf("Resize of a job without a PTY: %v, want an error of kind %s", err, bgjob.KindNoPTY)
	}
	if _, err := c.Resize(ctx, j.ID, 0, 30); !errors.Is(err, bgjob.ErrUsage) {
		t.Errorf("Resize to 0x30: %v, want ErrUsage", err)
	}
}

func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
