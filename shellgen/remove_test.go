package shellgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
)

// TestRemoveManyAtOnce runs rm.sh under every shell on 40 ended jobs, a
// running one, an ended one whose directory holds a file bgjob did not
// write, and the first job named again by its directory: the ended jobs
// are removed (R, in the order given), the running one is refused as busy
// and the other as not empty, both left whole, and the job named twice is
// not found the second time. The removals share one rm and one rmdir;
// what each job gets is what one removal at a time gave it.
func TestRemoveManyAtOnce(t *testing.T) {
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			t.Parallel()
			root := filepath.Join(t.TempDir(), "root")
			var ended []*jobdirtest.Dir
			var refs []string
			for range 40 {
				d := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited})
				ended = append(ended, d)
				refs = append(refs, d.Meta.ID)
			}
			running := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Running})
			foreign := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited})
			if err := os.WriteFile(filepath.Join(foreign.Path, "notes.txt"), []byte("mine\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			refs = append(refs, running.Meta.ID, foreign.Meta.ID)
			s, err := shellgen.RemoveScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.Remove{Refs: refs, Dirs: []string{ended[0].Path}})
			if err != nil {
				t.Fatal(err)
			}
			cmd := sh.command(t, "-c", s)
			cmd.Env = append(os.Environ(), "PATH="+sh.asSh(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.Bytes())
			}
			var got []string
			err = decodeEvents(bytes.NewReader(out), func(ev streamEvent) error {
				switch {
				case ev.Removed != "":
					got = append(got, "R "+ev.Removed)
				case ev.Err != nil:
					got = append(got, "E "+ev.Err.Kind+" "+ev.Err.Subject)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("decoding: %v\n%s", err, out)
			}
			var want []string
			for _, d := range ended {
				want = append(want, "R "+d.Path)
			}
			want = append(want, "E busy "+running.Meta.ID, "E notempty "+foreign.Path, "E notfound "+ended[0].Meta.ID)
			if !slices.Equal(got, want) {
				t.Errorf("records:\n%q\nwant:\n%q", got, want)
			}
			for _, d := range ended {
				if _, err := os.Lstat(d.Path); !os.IsNotExist(err) {
					t.Errorf("%s is still there (%v)", d.Meta.ID, err)
				}
			}
			for _, d := range []*jobdirtest.Dir{running, foreign} {
				if _, err := os.Stat(filepath.Join(d.Path, jobdir.MetaFile)); err != nil {
					t.Errorf("%s lost its meta.json: %v", d.Meta.ID, err)
				}
			}
		})
	}
}
