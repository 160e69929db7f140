package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
)

// job_list says what it returns: its status filter takes every status a
// job can have (an enum), its description and result name each, and a
// job that did not simply run or exit says why, in the fields of
// "bgjob ls --json" (reason, error, queued).
func TestListCoversEveryStatus(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *sdk.Tool) bool { return tl.Name == "job_list" })
	if i < 0 {
		t.Fatal("no job_list")
	}
	tl := tools.Tools[i]
	in := schemaOf(t, tl.InputSchema)
	var enum []string
	for _, v := range in.Properties["status"].Enum {
		enum = append(enum, v.(string))
	}
	var want []string
	for _, st := range jobdir.Statuses() {
		want = append(want, string(st))
		if !strings.Contains(tl.Description, string(st)) {
			t.Errorf("job_list's description does not name status %s: %s", st, tl.Description)
		}
		if d := schemaOf(t, tl.OutputSchema).Properties["jobs"].Items.Properties["status"].Description; !strings.Contains(d, string(st)) {
			t.Errorf("job_list's jobs[].status does not name status %s: %s", st, d)
		}
	}
	if !slices.Equal(enum, want) {
		t.Errorf("job_list's status filter takes %v, want %v", enum, want)
	}

	jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Killed, Reason: "stop"})
	jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{MetaSize: jobdir.MaxMetaSize + 1})
	var hold, queued, fails, notRun struct {
		ID string `json:"id"`
	}
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "slots": 1, "wait_sec": 0}, &hold)
	call(t, cs, "job_start", map[string]any{"command": "true", "slots": 1, "wait_sec": 0}, &queued)
	call(t, cs, "job_start", map[string]any{"command": "exit 3"}, &fails)
	call(t, cs, "job_start", map[string]any{"command": "true", "after_ok": []string{fails.ID}, "wait_sec": 5}, &notRun)

	type listed struct {
		ID     string        `json:"id"`
		Status jobdir.Status `json:"status"`
		Reason string        `json:"reason"`
		Error  string        `json:"error"`
		Queued string        `json:"queued"`
	}
	var out struct {
		Jobs []listed `json:"jobs"`
	}
	call(t, cs, "job_list", map[string]any{}, &out)
	byStatus := map[jobdir.Status]listed{}
	for _, j := range out.Jobs {
		byStatus[j.Status] = j
	}
	check := func(st jobdir.Status, ok func(listed) bool, want string) {
		t.Helper()
		if j, there := byStatus[st]; !there || !ok(j) {
			t.Errorf("job_list's %s job: %+v, want %s", st, j, want)
		}
	}
	check(jobdir.StatusKilled, func(j listed) bool { return j.Reason == "stop" }, "reason stop")
	check(jobdir.StatusNotRun, func(j listed) bool {
		return j.ID == notRun.ID && j.Reason == "after_ok" && j.Error == "job "+fails.ID+" exited 3"
	}, "reason after_ok and the error that says why")
	check(jobdir.StatusQueued, func(j listed) bool { return j.ID == queued.ID && j.Queued == "slot" }, "queued slot")
	check(jobdir.StatusUnreadable, func(j listed) bool { return strings.Contains(j.Error, "meta.json") }, "the error that says why (meta.json)")
	check(jobdir.StatusRunning, func(j listed) bool { return j.ID == hold.ID && j.Reason == "" && j.Error == "" }, "no reason, no error")

	// The filter takes every status.
	for _, st := range []jobdir.Status{jobdir.StatusNotRun, jobdir.StatusQueued, jobdir.StatusUnreadable} {
		call(t, cs, "job_list", map[string]any{"status": string(st)}, &out)
		if len(out.Jobs) != 1 || out.Jobs[0].Status != st {
			t.Errorf("job_list status %s: %+v, want the one job of that status", st, out.Jobs)
		}
	}
}

// schemaOf decodes a schema a client received.
func schemaOf(t *testing.T, v any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// job_list counts the jobs of the whole selection by status, and this
// client's among them (mine), whatever the page; it filters by exact
// name and to this client's jobs (mine), and says each row's reason.
func TestListCountsNameMine(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, mcp.Options{Root: root})
	// Two jobs no server of this test started.
	jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{State: jobdirtest.Killed, Reason: "stop"})
	jobdirtest.Make(t, root, jobdir.DefaultWorkspace, jobdirtest.Job{Meta: jobdir.Meta{Name: "build"}, State: jobdirtest.Exited})
	var web, b1, b2 job
	call(t, cs, "job_start", map[string]any{"command": "sleep 600", "name": "web", "wait_sec": 0}, &web)
	call(t, cs, "job_start", map[string]any{"command": "exit 3", "name": "build"}, &b1)
	call(t, cs, "job_start", map[string]any{"command": "true", "name": "buildx"}, &b2)

	type counts struct {
		Running, Queued, Exited, Killed, Lost, Unreadable, Mine int
		NotRun                                                  int `json:"not_run"`
	}
	type listed struct {
		Jobs []struct {
			ID     string        `json:"id"`
			Name   string        `json:"name"`
			Status jobdir.Status `json:"status"`
			Reason string        `json:"reason"`
			Mine   bool          `json:"mine"`
		} `json:"jobs"`
		Counts     counts `json:"counts"`
		NextCursor string `json:"next_cursor"`
	}
	all := counts{Running: 1, Exited: 3, Killed: 1, Mine: 3}
	var out listed
	res := call(t, cs, "job_list", map[string]any{"limit": 1}, &out)
	if len(out.Jobs) != 1 || out.Jobs[0].ID != b2.ID || out.NextCursor == "" || out.Counts != all {
		t.Fatalf("job_list limit 1: %+v, want job %s, a cursor and counts %+v", out, b2.ID, all)
	}
	if !strings.Contains(text(res), "5 jobs on this machine: 1 running, 3 exited, 1 killed; 3 started by you") {
		t.Errorf("job_list's text does not say the counts: %s", text(res))
	}
	// The next page counts the same selection.
	next := out.NextCursor
	out = listed{}
	call(t, cs, "job_list", map[string]any{"limit": 2, "cursor": next}, &out)
	if len(out.Jobs) != 2 || out.Jobs[0].ID != b1.ID || out.Jobs[1].ID != web.ID || out.Counts != all || out.NextCursor == "" {
		t.Errorf("job_list's second page: %+v, want %s and %s, counts %+v and a cursor", out, b1.ID, web.ID, all)
	}
	next = out.NextCursor
	out = listed{}
	call(t, cs, "job_list", map[string]any{"limit": 2, "cursor": next}, &out)
	if len(out.Jobs) != 2 || out.Jobs[0].Reason+out.Jobs[1].Reason != "stop" || out.NextCursor != "" || out.Counts != all {
		t.Errorf("job_list's last page: %+v, want two jobs (one killed by stop), no cursor, counts %+v", out, all)
	}

	out = listed{}
	call(t, cs, "job_list", map[string]any{"name": "build"}, &out)
	if len(out.Jobs) != 2 || out.Jobs[0].ID != b1.ID || !out.Jobs[0].Mine || out.Jobs[1].Mine || out.Counts != (counts{Exited: 2, Mine: 1}) {
		t.Errorf("job_list name build: %+v, want %s (mine) and the other build (not), counts exited 2, mine 1", out, b1.ID)
	}
	out = listed{}
	call(t, cs, "job_list", map[string]any{"mine": true, "limit": 2}, &out)
	if len(out.Jobs) != 2 || out.Jobs[0].ID != b2.ID || out.Counts != (counts{Running: 1, Exited: 2, Mine: 3}) || out.NextCursor == "" {
		t.Errorf("job_list mine, limit 2: %+v, want %s first of this client's 3 jobs, and a cursor", out, b2.ID)
	}
	next = out.NextCursor
	out = listed{}
	call(t, cs, "job_list", map[string]any{"mine": true, "cursor": next}, &out)
	if len(out.Jobs) != 1 || out.Jobs[0].ID != web.ID || out.NextCursor != "" {
		t.Errorf("job_list mine, second page: %+v, want %s alone", out, web.ID)
	}
}
