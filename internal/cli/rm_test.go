//go:build !windows

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
)

// TestPruneJSONOneDocument: prune --json that removes one job and cannot
// remove another (a directory that is not bgjob's inside it) prints one
// JSON value, the removed job beside the error and its kind, and the
// error on stderr, exit status 1.
func TestPruneJSONOneDocument(t *testing.T) {
	root := t.TempDir()
	ws := jobdir.DefaultWorkspace
	gone := jobdirtest.Make(t, root, ws, jobdirtest.Job{State: jobdirtest.Exited})
	stays := jobdirtest.Make(t, root, ws, jobdirtest.Job{State: jobdirtest.Exited})
	if err := os.Mkdir(filepath.Join(stays.Path, "userdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BGJOB_ROOT", root)
	t.Setenv("BGJOB_HOST", "")
	t.Setenv("BGJOB_WORKSPACE", "")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"prune", "--all", "--json"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "bgjob: error: ") {
		t.Errorf("exit status %d, stderr %q; want 1 and the error", code, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	var got struct {
		Jobs    []jobdir.Job `json:"jobs"`
		Stopped []jobdir.Job `json:"stopped"`
		Kept    []keptJSON   `json:"kept"`
		Error   string       `json:"error"`
		Kind    string       `json:"kind"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if len(got.Jobs) != 1 || got.Jobs[0].ID != gone.Meta.ID || got.Error == "" || got.Kind == "" {
		t.Errorf("prune --json = %+v; want job %s removed, and the error and its kind", got, gone.Meta.ID)
	}
	var more any
	if err := dec.Decode(&more); err != io.EOF {
		t.Errorf("prune --json printed a second JSON value after its document: %v (%v)", more, err)
	}
}
