package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
)

type removed struct {
	Removed    []string `json:"removed"`
	NotRemoved []struct {
		Ref   string `json:"ref"`
		Kind  string `json:"kind"`
		Error string `json:"error"`
	} `json:"not_removed"`
}

// job_remove removes ended jobs only, and says of each job it did not
// remove why; all removes the ended jobs of this client, not another's.
func TestRemove(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	other := jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Exited})
	var running, failed, named, last job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "wait_sec": 0}, &running)
	call(t, cs, "job_start", map[string]any{"command": "exit 3"}, &failed)
	call(t, cs, "job_start", map[string]any{"command": "true", "name": "done"}, &named)
	call(t, cs, "job_start", map[string]any{"command": "true"}, &last)

	var out removed
	res := call(t, cs, "job_remove", map[string]any{"ids": []string{running.ID, failed.ID, "done", "nosuchjob"}}, &out)
	if want := []string{failed.ID, named.ID}; !slices.Equal(out.Removed, want) {
		t.Errorf("job_remove removed %v, want %v", out.Removed, want)
	}
	why := map[string]string{}
	for _, n := range out.NotRemoved {
		why[n.Ref] = n.Kind
		if n.Ref == running.ID && !strings.Contains(n.Error, "still running") {
			t.Errorf("job_remove of a running job: %q, want it said to be still running", n.Error)
		}
	}
	if len(why) != 2 || why[running.ID] != "busy" || why["nosuchjob"] != "not_found" {
		t.Errorf("job_remove's refusals: %+v, want %s busy and nosuchjob not_found", out.NotRemoved, running.ID)
	}
	if !strings.Contains(text(res), "removed job "+failed.ID) || !strings.Contains(text(res), "still running") {
		t.Errorf("job_remove's text: %s", text(res))
	}

	out = removed{}
	call(t, cs, "job_remove", map[string]any{"all": true}, &out)
	if !slices.Equal(out.Removed, []string{last.ID}) || len(out.NotRemoved) != 0 {
		t.Errorf("job_remove all: %+v, want %s alone (the one ended job of this client left)", out, last.ID)
	}
	var list struct{ Jobs []job }
	call(t, cs, "job_list", map[string]any{}, &list)
	var ids []string
	for _, j := range list.Jobs {
		ids = append(ids, j.ID)
	}
	// As a set: ids made within one millisecond sort by their random part.
	slices.Sort(ids)
	want := []string{running.ID, other.Meta.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("jobs left: %v, want %v (the running one, and another client's)", ids, want)
	}
	out = removed{}
	res = call(t, cs, "job_remove", map[string]any{"all": true}, &out)
	if len(out.Removed) != 0 || !strings.Contains(text(res), "no ended job of yours") {
		t.Errorf("a second job_remove all: %+v %q, want nothing removed", out, text(res))
	}
}
