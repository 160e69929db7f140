package mcp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/jobdir"
)

// TestLabels starts jobs with labels, finds them with job_list's labels
// filter and stops them with job_stop's: each job also carries the label
// of the client that started it (mcp.client, "test" in serve's client).
func TestLabels(t *testing.T) {
	cs := serve(t, mcp.Options{})
	type labelled struct {
		ID     string            `json:"id"`
		Status jobdir.Status     `json:"status"`
		Labels map[string]string `json:"labels"`
	}
	var web, db labelled
	call(t, cs, "job_start", map[string]any{"command": "sleep 60", "wait_sec": 0, "labels": map[string]string{"team": "a", "role": "web"}}, &web)
	call(t, cs, "job_start", map[string]any{"command": "sleep 60", "wait_sec": 0, "labels": map[string]string{"team": "a", "role": "db"}}, &db)
	want := map[string]string{"team": "a", "role": "web", mcp.ClientLabel: "test"}
	if diff := cmp.Diff(want, web.Labels); diff != "" {
		t.Errorf("job_start's labels (-want +got):\n%s", diff)
	}
	var list struct {
		Jobs []labelled `json:"jobs"`
	}
	for _, c := range []struct {
		name    string
		filter  map[string]string
		wantIDs []string
	}{
		{"one label", map[string]string{"role": "web"}, []string{web.ID}},
		{"all must match", map[string]string{"team": "a", "role": "db"}, []string{db.ID}},
		{"the client's", map[string]string{mcp.ClientLabel: "test"}, []string{db.ID, web.ID}},
		{"none", map[string]string{"team": "b"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			call(t, cs, "job_list", map[string]any{"labels": c.filter}, &list)
			var ids []string
			for _, j := range list.Jobs {
				ids = append(ids, j.ID)
			}
			if diff := cmp.Diff(c.wantIDs, ids); diff != "" {
				t.Errorf("job_list labels %v (-want +got):\n%s", c.filter, diff)
			}
		})
	}
	var stopped struct {
		Jobs []labelled `json:"jobs"`
	}
	call(t, cs, "job_stop", map[string]any{"labels": map[string]string{"role": "db"}, "grace_sec": 1}, &stopped)
	if len(stopped.Jobs) != 1 || stopped.Jobs[0].ID != db.ID || stopped.Jobs[0].Status != jobdir.StatusKilled {
		t.Fatalf("job_stop labels role=db: %+v, want %s killed", stopped.Jobs, db.ID)
	}
	call(t, cs, "job_list", map[string]any{"labels": map[string]string{"team": "a"}, "status": "running"}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != web.ID {
		t.Errorf("after the stop, running jobs of team=a: %+v, want only %s", list.Jobs, web.ID)
	}
	if res := callRaw(t, cs, "job_start", map[string]any{"command": "true", "labels": map[string]string{"bad key": "x"}}); !res.IsError {
		t.Errorf("job_start with the label key %q: no error", "bad key")
	}
}
