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
