package bgjob

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/shellgen"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/runtime/local"
)

// nativeShells returns the shells the status script is run under to be
// compared with the status made in Go: /bin/sh, and bash and busybox sh
// where they are (busybox through a link named sh, its sh applet).
func nativeShells(t *testing.T) map[string]string {
	shells := map[string]string{"/bin/sh": "/bin/sh"}
	if p, err := exec.LookPath("bash"); err == nil {
		shells["bash"] = p
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		link := filepath.Join(t.TempDir(), "sh")
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
		shells["busybox"] = link
	}
	return shells
}

// TestNativeStatusIsTheScripts: where status is made in Go (an ended job
// whose leftovers are recorded, named by its id), what it prints is, byte
// for byte, what status.sh prints under each shell; every other case is
// left to the script.
func TestNativeStatusIsTheScripts(t *testing.T) {
	// A tab in the root: J records escape it.
	root := filepath.Join(t.TempDir(), "r\too\\t")
	ctx := context.Background()
	recorded := func(d *jobdirtest.Dir) {
		t.Helper()
		write(t, filepath.Join(d.Path, "leftovers"), "0\n")
	}
	make := func(j jobdirtest.Job) *jobdirtest.Dir {
		t.Helper()
		d := jobdirtest.Make(t, root, "default", j)
		recorded(d)
		return d
	}
	type job struct {
		name string
		dir  *jobdirtest.Dir
	}
	var native, script []job
	native = append(native,
		job{"exited", make(jobdirtest.Job{State: jobdirtest.Exited, ExitCode: 3})},
		job{"killed", make(jobdirtest.Job{State: jobdirtest.Killed})},
		job{"dropped", make(jobdirtest.Job{State: jobdirtest.Exited, StdoutDropped: 10, StderrDropped: 20})},
		// Its pid is a live process (this test's), of another start
		// time: the P record holds that process's.
		job{"pid alive", make(jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{PID: os.Getpid(), ProcStart: "1"}})},
	)
	odd := make(jobdirtest.Job{State: jobdirtest.Exited})
	// Lines without their newline, a carriage return, backslashes, a
	// queued and a not_run record beside the exit.
	write(t, filepath.Join(odd.Path, "exit_code"), "0")
	write(t, filepath.Join(odd.Path, "ended_at"), "2026-12-04T10:00:00.000Z\r\\n\\\n2nd line\n")
	write(t, filepath.Join(odd.Path, "queued"), "")
	write(t, filepath.Join(odd.Path, "not_run"), "why\tnot\n")
	meta, err := os.ReadFile(filepath.Join(odd.Path, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(odd.Path, "meta.json"), strings.TrimSuffix(string(meta), "\n"))
	native = append(native, job{"odd lines", odd})
	// A line the shell splits at commas with a last empty field, which
	// is no field: bg_pick finds no pid four fields from the end.
	comma := make(jobdirtest.Job{State: jobdirtest.Exited})
	write(t, filepath.Join(comma.Path, "meta.json"), `{"a":1,"pid":`+fmt.Sprint(os.Getpid())+`,"proc_start":"1","boot_id":"b"},`+"\n")
	native = append(native, job{"a last comma", comma})

	running := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Running})
	recorded(running)
	unrecorded := jobdirtest.Make(t, root, "default", jobdirtest.Job{State: jobdirtest.Exited})
	withLeft := make(jobdirtest.Job{State: jobdirtest.Exited})
	write(t, filepath.Join(withLeft.Path, "leftovers"), "1\n")
	big := make(jobdirtest.Job{State: jobdirtest.Exited, MetaSize: 9000})
	nul := make(jobdirtest.Job{State: jobdirtest.Exited})
	write(t, filepath.Join(nul.Path, "ended_at"), "2026\x00\n")
	zeroPID := make(jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{PID: 4242}})
	meta, err = os.ReadFile(filepath.Join(zeroPID.Path, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(zeroPID.Path, "meta.json"), strings.Replace(string(meta), `"pid":4242`, `"pid":04242`, 1))
	script = append(script,
		job{"running", running}, job{"not recorded", unrecorded}, job{"leftovers 1", withLeft},
		job{"meta.json over 8 KiB", big}, job{"a NUL byte", nul}, job{"a pid with a leading 0", zeroPID},
	)

	c, err := NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	shells := nativeShells(t)
	compare := func(t *testing.T, refs []string) {
		t.Helper()
		got, ok := c.nativeStatus(refs)
		if !ok {
			t.Fatalf("status %v: left to the script, want it made in Go", refs)
		}
		s, err := shellgen.StatusScript(c.target(), refs)
		if err != nil {
			t.Fatal(err)
		}
		for name, sh := range shells {
			var want bytes.Buffer
			if err := (&local.Runtime{Shell: sh}).Exec(ctx, s, nil, &want); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != want.String() {
				t.Errorf("status %v made in Go:\n%q\nthe script under %s:\n%q", refs, got, name, want.String())
			}
		}
	}
	var all []string
	for _, j := range native {
		t.Run(j.name, func(t *testing.T) { compare(t, []string{j.dir.Meta.ID}) })
		all = append(all, j.dir.Meta.ID)
	}
	t.Run("all at once", func(t *testing.T) { compare(t, all) })
	for _, j := range script {
		t.Run(j.name, func(t *testing.T) {
			if _, ok := c.nativeStatus([]string{j.dir.Meta.ID}); ok {
				t.Errorf("made in Go, want it left to the script")
			}
			if _, ok := c.nativeStatus([]string{native[0].dir.Meta.ID, j.dir.Meta.ID}); ok {
				t.Errorf("with an ended job before it: made in Go, want it left to the script")
			}
		})
	}
	for _, ref := range []string{"some-name", "20261204T000000-zzzzzz"} {
		if _, ok := c.nativeStatus([]string{ref}); ok {
			t.Errorf("status %s (no such job): made in Go, want it left to the script", ref)
		}
	}
	// A root the script refuses is the script's to refuse.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	lc, err := NewClient(local.New(), link, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lc.nativeStatus([]string{native[0].dir.Meta.ID}); ok {
		t.Errorf("a root that is a symbolic link: made in Go, want it left to the script")
	}
}

// write writes body to name, failing t on error.
func write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
