package shellgen_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// runJobs runs script with sh and returns the jobs it observed, by id,
// and its refusals.
func runJobs(t *testing.T, sh shell, script string) (map[string]jobdir.Job, []refErr) {
	t.Helper()
	cmd := sh.command(t, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	jobs := map[string]jobdir.Job{}
	var refused []refErr
	err = decodeEvents(bytes.NewReader(out), func(ev streamEvent) error {
		switch {
		case ev.Job != nil:
			j := jobdir.Derive(*ev.Job, "")
			jobs[j.ID] = j
		case ev.Err != nil:
			refused = append(refused, *ev.Err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("decoding: %v\nstderr:\n%s", err, stderr.Bytes())
	}
	return jobs, refused
}

// TestMetaSizeBound: a meta.json larger than jobdir.MaxMetaSize is not
// read and its job is unreadable, in a listing (one scan of the
// workspace), in a listing of every workspace, by itself (status) and
// in a read of its logs;
// one larger than the shells' cheap read (8 KiB) but within the bound is
// read whole. Before the bound, the oversized job listed as exited, read
// a byte per system call (an 8 MB one made ls take seconds).
func TestMetaSizeBound(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			small := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "small"}}).Meta
			big := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "big"}, MetaSize: 100 << 10}).Meta
			over := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "over"}, MetaSize: jobdir.MaxMetaSize + 1}).Meta
			if fi, err := os.Stat(filepath.Join(root, "w", over.ID, jobdir.MetaFile)); err != nil || fi.Size() != jobdir.MaxMetaSize+1 {
				t.Fatalf("the oversized meta.json: %v, %v", fi, err)
			}
			tg := shellgen.Target{Root: root, Workspace: "w"}
			check := func(t *testing.T, jobs map[string]jobdir.Job, ids ...string) {
				t.Helper()
				if len(jobs) != len(ids) {
					t.Errorf("%d jobs, want %d: %v", len(jobs), len(ids), jobs)
				}
				for _, id := range ids {
					j := jobs[id]
					switch id {
					case over.ID:
						if j.Status != jobdir.StatusUnreadable || !strings.Contains(j.Error, "larger than 4194304 bytes") {
							t.Errorf("oversized job: status %s, error %q; want unreadable, larger than 4194304 bytes", j.Status, j.Error)
						}
					default:
						if j.Status != jobdir.StatusExited || j.Command != "true" || j.Name == "" {
							t.Errorf("job %s: status %s, command %q, name %q, error %q; want exited, true", id, j.Status, j.Command, j.Name, j.Error)
						}
					}
				}
			}
			t.Run("list", func(t *testing.T) {
				s, err := shellgen.ListScript(tg, shellgen.List{})
				if err != nil {
					t.Fatal(err)
				}
				jobs, _ := runJobs(t, sh, s)
				check(t, jobs, small.ID, big.ID, over.ID)
			})
			t.Run("list all workspaces", func(t *testing.T) {
				s, err := shellgen.ListScript(shellgen.Target{Root: root}, shellgen.List{AllWorkspaces: true})
				if err != nil {
					t.Fatal(err)
				}
				jobs, _ := runJobs(t, sh, s)
				check(t, jobs, small.ID, big.ID, over.ID)
			})
			t.Run("status", func(t *testing.T) {
				// By id; the big one by name too (its name is read from meta.json).
				s, err := shellgen.StatusScript(tg, []string{over.ID, "big", "small"})
				if err != nil {
					t.Fatal(err)
				}
				jobs, refused := runJobs(t, sh, s)
				check(t, jobs, over.ID, big.ID, small.ID)
				if len(refused) != 0 {
					t.Errorf("refused: %v", refused)
				}
			})
			t.Run("logs", func(t *testing.T) {
				// An ended job's read learns meta.json's size with its logs'.
				for _, id := range []string{small.ID, big.ID, over.ID} {
					s, err := shellgen.LogsScript(tg, shellgen.Logs{Ref: id, Streams: []string{"stdout", "stderr"}, Tail: 10})
					if err != nil {
						t.Fatal(err)
					}
					jobs, refused := runJobs(t, sh, s)
					check(t, jobs, id)
					if len(refused) != 0 {
						t.Errorf("refused: %v", refused)
					}
				}
			})
		})
	}
}

// TestMetaRemovedWhileRead: a meta.json removed between the look that
// finds it and the read (a concurrent rm or prune) leaves its job being
// removed, not torn: a listing reports it as missing its meta.json, as a
// removal under way, and never as meta.json that is not JSON (ls listed
// such a job unreadable, "unexpected end of JSON input", while prune
// removed it). A head(1) that removes the file before it fails makes the
// race happen every time, on the read of a meta.json over 8 KiB.
func TestMetaRemovedWhileRead(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			kept := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "kept"}}).Meta
			gone := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "gone"}, MetaSize: 100 << 10}).Meta
			realHead, err := exec.LookPath("head")
			if err != nil {
				t.Fatal(err)
			}
			bin := t.TempDir()
			fake := "#!/bin/sh\nfor a; do case $a in */meta.json) rm -f \"$a\"; exit 1 ;; esac; done\nexec " + realHead + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "head"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := shellgen.ListScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.List{})
			if err != nil {
				t.Fatal(err)
			}
			qbin, err := shellgen.Quote(bin)
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := runJobs(t, sh, "PATH="+qbin+":$PATH\n"+s)
			if _, err := os.Stat(filepath.Join(root, "w", gone.ID, jobdir.MetaFile)); !os.IsNotExist(err) {
				t.Fatalf("the fake head did not remove the big meta.json: %v", err)
			}
			if j := jobs[kept.ID]; j.Status != jobdir.StatusExited {
				t.Errorf("the other job: %s %q, want exited", j.Status, j.Error)
			}
			if j := jobs[gone.ID]; j.Status != jobdir.StatusUnreadable || j.Error != "meta.json is missing" {
				t.Errorf("the job whose meta.json went during the read: %s %q, want unreadable, meta.json is missing", j.Status, j.Error)
			}
		})
	}
}

// TestExitCodeRemovedWhileRead: a job removed while its files are read (a
// concurrent rm or prune deletes meta.json, then exit_code) is reported as
// a removal under way, never as a job with an exit_code that is not a
// number (ls listed such a job unreadable, `exit_code: "" is not a
// number`, while prune removed it). An exit_code that is a FIFO holds the
// read until the test has removed the files, so the race happens every
// time.
func TestExitCodeRemovedWhileRead(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			kept := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "kept"}}).Meta
			gone := jobdirtest.Make(t, root, "w", jobdirtest.Job{Meta: jobdir.Meta{Name: "gone"}})
			code := filepath.Join(gone.Path, "exit_code")
			if err := os.Remove(code); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(code, 0o600); err != nil {
				t.Fatal(err)
			}
			removed := make(chan error, 1)
			go func() {
				// Opening blocks until the script opens exit_code to read it.
				w, err := os.OpenFile(code, os.O_WRONLY, 0)
				if err != nil {
					removed <- err
					return
				}
				err = errors.Join(os.Remove(filepath.Join(gone.Path, jobdir.MetaFile)), os.Remove(code), w.Close())
				removed <- err
			}()
			s, err := shellgen.ListScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.List{})
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := runJobs(t, sh, s)
			select {
			case err := <-removed:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the listing never read exit_code")
			}
			if j := jobs[kept.ID]; j.Status != jobdir.StatusExited {
				t.Errorf("the other job: %s %q, want exited", j.Status, j.Error)
			}
			if j := jobs[gone.Meta.ID]; j.Status != jobdir.StatusUnreadable || j.Error != "meta.json is missing" {
				t.Errorf("the job removed during the read: %s %q, want unreadable, meta.json is missing", j.Status, j.Error)
			}
		})
	}
}

// TestMetaFIFOIsNotRead: a meta.json that is a FIFO (put there by hand) is
// never opened: its job is unreadable, and a listing, a status by id or by
// a name (whose search greps every meta.json) and a read of its logs
// answer at once. Each waited for ever on the FIFO (ls 30 s, to the
// client's host timeout).
func TestMetaFIFOIsNotRead(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			tgt := shellgen.Target{Root: root, Workspace: "w"}
			fifo := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited, Stdout: "out\n"})
			good := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{Name: "good"}})
			meta := filepath.Join(fifo.Path, "meta.json")
			if err := os.Remove(meta); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(meta, 0o600); err != nil {
				t.Fatal(err)
			}
			list, _ := shellgen.ListScript(tgt, shellgen.List{})
			byID, _ := shellgen.StatusScript(tgt, []string{fifo.Meta.ID})
			byName, _ := shellgen.StatusScript(tgt, []string{"nosuchname", "good"})
			logs, _ := shellgen.LogsScript(tgt, shellgen.Logs{Ref: fifo.Meta.ID, Streams: []string{"stdout"}})
			for _, c := range []struct{ name, script string }{{"ls", list}, {"status by id", byID}, {"status by name", byName}, {"logs", logs}} {
				cmd := sh.command(t, "-c", c.script)
				cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
				var out bytes.Buffer
				cmd.Stdout = &out
				// What it started may hold its output once it is killed.
				cmd.WaitDelay = 2 * time.Second
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
				cmd.Wait()
				if !timer.Stop() {
					t.Errorf("%s: no answer within 20 s (it read the FIFO)", c.name)
					continue
				}
				if !strings.Contains(out.String(), "@@bgjob-end@@") {
					t.Errorf("%s: no end marker: %q", c.name, out.String())
				}
			}
			if t.Failed() {
				return
			}
			jobs, _ := runJobs(t, sh, list)
			if j := jobs[fifo.Meta.ID]; j.Status != jobdir.StatusUnreadable {
				t.Errorf("the job whose meta.json is a FIFO: %s, want unreadable", j.Status)
			}
			if j := jobs[good.Meta.ID]; j.Status != jobdir.StatusExited {
				t.Errorf("the other job: %s, want exited", j.Status)
			}
		})
	}
}
