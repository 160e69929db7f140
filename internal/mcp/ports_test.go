package mcp_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/mcp"
)

// portView is a port as job_start and job_list report it.
type portView struct {
	Port    int    `json:"port"`
	Proto   string `json:"proto"`
	Address string `json:"address"`
}

// job_start with ready_port returns once the job listens (the port, and
// the job's ports), and job_list then shows the job's ports; a job that
// ends first is the other outcome, as with ready_output.
func TestStartReadyPort(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	cs := serve(t, mcp.Options{})
	var st struct {
		started
		Port  *portView  `json:"port"`
		Ports []portView `json:"ports"`
	}
	cmd := "sleep 0.3; exec " + py + ` -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); time.sleep(60)'`
	res := call(t, cs, "job_start", map[string]any{"command": cmd, "ready_port": 0, "ready_timeout_sec": 30}, &st)
	if st.Ready == nil || !*st.Ready || st.Port == nil || st.Port.Address != "127.0.0.1" || st.Port.Proto != "tcp" || len(st.Ports) != 1 || st.Ports[0] != *st.Port {
		t.Fatalf("job_start ready_port: ready %v, port %+v, ports %+v; want ready on 127.0.0.1", st.Ready, st.Port, st.Ports)
	}
	if !strings.Contains(text(res), "listens on") {
		t.Errorf("text %q does not say it listens", text(res))
	}
	var list struct {
		Jobs []struct {
			ID    string     `json:"id"`
			Ports []portView `json:"ports"`
		} `json:"jobs"`
	}
	res = call(t, cs, "job_list", map[string]any{}, &list)
	if len(list.Jobs) == 0 || list.Jobs[0].ID != st.ID || len(list.Jobs[0].Ports) != 1 || list.Jobs[0].Ports[0] != *st.Port {
		t.Errorf("job_list: %+v; want job %s with port %+v", list.Jobs, st.ID, st.Port)
	}
	if !strings.Contains(text(res), "listening on ") {
		t.Errorf("job_list text %q does not name the port", text(res))
	}
	call(t, cs, "job_start", map[string]any{"command": "exit 5", "ready_port": 8000, "ready_timeout_sec": 30}, &st)
	if st.Ready == nil || *st.Ready || exitCode(st.job) != 5 {
		t.Errorf("job_start ready_port of a job that exits: ready %v, exit %d; want not ready, 5", st.Ready, exitCode(st.job))
	}
}
