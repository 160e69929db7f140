package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestEndedRecordsKept: a Runtime that looks again makes the records of an
// ended job with its leftovers record from what its last look made, as
// long as the job's directory has not changed; they are, byte for byte,
// what the scripts print, before and after a file of the job changes
// (bgjob's writes create or rename files, which moves the directory's
// change time), and a directory changed within endedSettle of a look is
// not kept.
func TestEndedRecordsKept(t *testing.T) {
	old := endedSettle
	endedSettle = 200 * time.Millisecond
	t.Cleanup(func() { endedSettle = old })
	root := t.TempDir()
	start := time.Now().Add(-time.Hour)
	var dirs []string
	for i := range 3 {
		j := jobdirtest.Job{State: jobdirtest.Exited, ExitCode: i, Meta: jobdir.Meta{StartedAt: start.Add(time.Duration(i) * time.Second)}}
		if i == 1 {
			j.ReadyAt = start
		}
		d := jobdirtest.Make(t, root, "default", j)
		write(t, filepath.Join(d.Path, "leftovers"), "0\n")
		dirs = append(dirs, d.Path)
	}
	c, err := newClient(t, root, "")
	if err != nil {
		t.Fatal(err)
	}
	shells := nativeShells(t)
	kept := func(dir string) (endedObs, bool) {
		c.procs.mu.Lock()
		defer c.procs.mu.Unlock()
		e, ok := c.procs.ended[dir]
		return e, ok
	}
	look := func() string {
		t.Helper()
		return compareLook(t, c, shells, dirs, nil, &shellgen.List{})
	}

	// Made within endedSettle of their directories' changes: not kept.
	look()
	for _, d := range dirs {
		if _, ok := kept(d); ok {
			t.Fatalf("%s kept within endedSettle of its change", d)
		}
	}
	time.Sleep(2 * endedSettle)
	first := look()
	for _, d := range dirs {
		if _, ok := kept(d); !ok {
			t.Fatalf("%s not kept once settled", d)
		}
	}
	if again := look(); again != first {
		t.Errorf("the look from the kept records:\n%q\nbefore:\n%q", again, first)
	}
	// A status too (one job by id).
	compareLook(t, c, shells, dirs, []string{filepath.Base(dirs[0])}, nil)

	// A file written as bgjob writes one (renamed into place): the
	// records are made again, with it.
	stop := filepath.Join(dirs[2], "stop")
	write(t, stop+".tmp", "stop\n")
	if err := os.Rename(stop+".tmp", stop); err != nil {
		t.Fatal(err)
	}
	if got := look(); !strings.Contains(got, "\nS\tstop\n") {
		t.Errorf("after a stop file was written, the look did not tell it:\n%s", got)
	}
	if e, ok := kept(dirs[2]); ok && strings.Contains(e.tail, "\nS\t") {
		t.Errorf("the records of a directory changed within endedSettle were kept")
	}
	time.Sleep(2 * endedSettle)
	look()
	if e, ok := kept(dirs[2]); !ok || !strings.Contains(e.head+e.tail, "S\tstop\n") {
		t.Errorf("the settled records with the stop file were not kept: %+v %v", e, ok)
	}
	// A removal under way (meta.json taken first): the job is not listed,
	// as the script does not list it.
	if err := os.Remove(filepath.Join(dirs[0], "meta.json")); err != nil {
		t.Fatal(err)
	}
	if got := look(); strings.Contains(got, filepath.Base(dirs[0])) {
		t.Errorf("a job whose meta.json was removed was listed from kept records:\n%s", got)
	}
}

// BenchmarkListEnded: ls of 80 ended jobs with their leftovers records,
// made in Go by a Runtime that looks again (the MCP server's job_list
// counts every job), with the ended jobs' records kept (kept) and read
// anew each time (read). docs/design.md cites it:
//
//	go test -run '^$' -bench ListEnded ./runtime/local
func BenchmarkListEnded(b *testing.B) {
	old := endedSettle
	endedSettle = 0
	b.Cleanup(func() { endedSettle = old })
	root := b.TempDir()
	start := time.Now().Add(-time.Hour)
	for i := range 80 {
		d := jobdirtest.Make(b, root, "default", jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{StartedAt: start.Add(time.Duration(i) * time.Second)}})
		if err := os.WriteFile(filepath.Join(d.Path, "leftovers"), []byte("0\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	for _, kept := range []bool{true, false} {
		b.Run(map[bool]string{true: "kept", false: "read"}[kept], func(b *testing.B) {
			a := answerer{root: root, workspace: "default", procs: &procCache{}}
			for b.Loop() {
				if !kept {
					a.procs.mu.Lock()
					a.procs.ended = nil
					a.procs.mu.Unlock()
				}
				if _, ok := a.list(shellgen.List{}); !ok {
					b.Fatal("ls left to the script")
				}
			}
		})
	}
}
