package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/mcp"
)

// job_wait until_output finds a line written after the job's log was
// truncated under it (logrotate's copytruncate: ': > stdout.log'): the
// wait reads the log again from its start, and the result says so. It used
// to time out, the line in the log. The log read again is named "ID
// STREAM", also when the wait named the job by its name.
func TestWaitUntilOutputAfterTruncation(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	gate := filepath.Join(t.TempDir(), "go")
	var st job
	call(t, cs, "job_start", map[string]any{
		"command":  fmt.Sprintf(`i=0; while [ $i -lt 200 ]; do echo "before $i"; i=$((i+1)); done; while [ ! -e %s ]; do sleep 0.05; done; echo after-truncation; sleep 60`, gate),
		"name":     "rot",
		"wait_sec": 0,
	}, &st)
	var w struct {
		waited
		Rewound []string `json:"rewound"`
	}
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^before 199$"}, &w)
	dirs, _ := filepath.Glob(filepath.Join(root, "*", st.ID))
	if len(dirs) != 1 {
		t.Fatalf("job directory of %s: %v", st.ID, dirs)
	}
	// The first wait's watch is gone before the second begins: seen
	// still in place, it was taken for the second's (the log truncated
	// before the second had read it, nothing to rewind).
	eventually(t, time.Minute, func() bool { return !watching(dirs[0]) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, cs, "job_wait", map[string]any{"ids": []string{"rot"}, "until_output": "^after-truncation$", "timeout_sec": 60}, &w)
	}()
	// The wait has read the log to its end once it watches the job's
	// directory (its first look found no line).
	eventually(t, time.Minute, func() bool { return watching(dirs[0]) })
	if err := os.Truncate(filepath.Join(dirs[0], "stdout.log"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	if w.Matched != "after-truncation" || w.TimedOut || !slices.Equal(w.Rewound, []string{st.ID + " stdout"}) {
		t.Errorf("job_wait after a truncation: %+v, rewound %q; want the line, and %q", w.waited, w.Rewound, st.ID+" stdout")
	}
}

// job_wait until_output says rewound also where the log, truncated under
// the wait, has grown again past where the wait had read to before the
// script looks (its line written after that): the match was found, but
// nothing said the log had been read again from its start.
func TestWaitUntilOutputAfterTruncationAndRegrowth(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	gate := filepath.Join(t.TempDir(), "go")
	var st job
	call(t, cs, "job_start", map[string]any{
		"command":  fmt.Sprintf(`i=0; while [ $i -lt 200 ]; do echo "before $i"; i=$((i+1)); done; while [ ! -e %s ]; do sleep 0.05; done; i=0; while [ $i -lt 400 ]; do echo "filler $i"; i=$((i+1)); done; echo after-truncation; sleep 60`, gate),
		"wait_sec": 0,
	}, &st)
	var w struct {
		waited
		Rewound []string `json:"rewound"`
	}
	call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^before 199$"}, &w)
	dirs, _ := filepath.Glob(filepath.Join(root, "*", st.ID))
	if len(dirs) != 1 {
		t.Fatalf("job directory of %s: %v", st.ID, dirs)
	}
	// The first wait's watch is gone before the second begins: seen
	// still in place, it was taken for the second's (the log truncated
	// before the second had read it, nothing to rewind).
	eventually(t, time.Minute, func() bool { return !watching(dirs[0]) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, cs, "job_wait", map[string]any{"ids": []string{st.ID}, "until_output": "^after-truncation$", "timeout_sec": 60}, &w)
	}()
	eventually(t, time.Minute, func() bool { return watching(dirs[0]) })
	if err := os.Truncate(filepath.Join(dirs[0], "stdout.log"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	if w.Matched != "after-truncation" || w.TimedOut || !slices.Equal(w.Rewound, []string{st.ID + " stdout"}) {
		t.Errorf("job_wait after a truncation and regrowth: %+v, rewound %q; want the line, and %q", w.waited, w.Rewound, st.ID+" stdout")
	}
}

// job_output says in its text, not only in streams[].rewound, that a log
// found truncated and grown again past the cursor was read again from its
// start: a client that passes the model only the text sees it too.
func TestOutputSaysRewound(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	var st job
	call(t, cs, "job_start", map[string]any{"command": "echo first-line-of-old-log; sleep 60", "wait_sec": 0}, &st)
	dirs, _ := filepath.Glob(filepath.Join(root, "*", st.ID))
	if len(dirs) != 1 {
		t.Fatalf("job directory of %s: %v", st.ID, dirs)
	}
	log := filepath.Join(dirs[0], "stdout.log")
	eventually(t, time.Minute, func() bool { fi, err := os.Stat(log); return err == nil && fi.Size() > 0 })
	var out struct {
		Text string `json:"text"`
	}
	call(t, cs, "job_output", map[string]any{"id": st.ID}, &out)
	if out.Text != "first-line-of-old-log\n" {
		t.Fatalf("first read: %q", out.Text)
	}
	if err := os.WriteFile(log, []byte("NEW-LOG-LINE-1\nNEW-LOG-LINE-2\nNEW-LOG-LINE-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "job_output", map[string]any{"id": st.ID}, &out)
	if want := "job " + st.ID + ": stdout.log was truncated; it was read again from its start"; !strings.Contains(text(res), want) || !strings.HasPrefix(out.Text, "NEW-LOG-LINE-1\n") {
		t.Errorf("job_output after a truncation and regrowth: text %q, output %q; want it to say %q", text(res), out.Text, want)
	}
}

// watching reports whether this process has an inotify watch on dir.
func watching(dir string) bool {
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return false
	}
	want := fmt.Sprintf(" ino:%x ", st.Ino)
	infos, _ := filepath.Glob("/proc/self/fdinfo/*")
	for _, p := range infos {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "inotify wd:") && strings.Contains(string(b), want) {
			return true
		}
	}
	return false
}
