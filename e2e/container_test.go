package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/jobdir"
	ctr "github.com/bgjob/bgjob/runtime/container"
)

// containerEngines runs fn once per engine, as a parallel subtest.
func containerEngines(t *testing.T, fn func(t *testing.T, d *containertest.Daemon)) {
	for _, e := range []string{ctr.Docker, ctr.Podman} {
		t.Run(e, func(t *testing.T) {
			t.Parallel()
			fn(t, containertest.Start(t, e))
		})
	}
}

// must runs bgjob and fails the test unless it exits with want; it
// returns stdout.
func must(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out, errs := bgjob(context.Background(), args...)
	if code != want {
		t.Fatalf("bgjob %s: exit %d, want %d; stdout %q; stderr %q", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

func statusOf(t *testing.T, g []string, id string) jobdir.Job {
	t.Helper()
	var jobs []jobdir.Job
	out := must(t, 0, append(g, "status", "--json", id)...)
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("status %s: %q: %v", id, out, err)
	}
	return jobs[0]
}

// TestContainerVerbs: the verbs work in a busybox container as on any
// host: exit codes 3, 143 and 137, both streams, escapees, follow, wait
// --for, send, rm, prune; --pty and --max-log-size are refused there.
func TestContainerVerbs(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		g := []string{"-H", c.Host()}

		id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "echo out; echo err >&2; exit 3")...))
		must(t, 3, append(g, "wait", id)...)
		if out := must(t, 0, append(g, "logs", id)...); out != "out\n" {
			t.Errorf("logs: %q", out)
		}
		if out := must(t, 0, append(g, "logs", "--stderr", id)...); out != "err\n" {
			t.Errorf("logs --stderr: %q", out)
		}
		if j := statusOf(t, g, id); j.Status != jobdir.StatusExited || j.Host != c.Host() || !strings.HasPrefix(j.StdoutPath, "/tmp/bgjob-0/default/") {
			t.Errorf("status: %+v, want exited on %s under /tmp/bgjob-0", j, c.Host())
		}

		term := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "sleep 300")...))
		must(t, 0, append(g, "stop", term)...)
		must(t, 143, append(g, "wait", term)...)
		kill := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "sleep 300")...))
		must(t, 0, append(g, "stop", "-s", "KILL", kill)...)
		must(t, 137, append(g, "wait", kill)...)

		esc := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "sleep 7300 & echo started")...))
		must(t, 0, append(g, "wait", esc)...)
		if j := statusOf(t, g, esc); j.Status != jobdir.StatusExited || j.LiveProcesses != 1 {
			t.Errorf("escapee: %+v, want exited with 1 live process", j)
		}
		must(t, 0, append(g, "stop", esc)...)
		if j := statusOf(t, g, esc); j.LiveProcesses != 0 {
			t.Errorf("escapee after stop: %+v, want no live process", j)
		}

		srv := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "-n", "srv", "--stdin", "--", "echo booting; sleep 0.5; echo ready; while read -r l; do echo got $l; done")...))
		must(t, 0, append(g, "wait", "--for", "^ready", "--timeout", "30s", srv)...)
		must(t, 0, append(g, "send", "srv", "ping\n")...)
		must(t, 0, append(g, "wait", "--for", "got ping", "--timeout", "30s", srv)...)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, follow, _ := bgjob(ctx, append(g, "logs", "-f", srv)...)
		cancel()
		if follow != "booting\nready\ngot ping\n" {
			t.Errorf("logs -f: %q", follow)
		}
		must(t, 0, append(g, "stop", "srv")...)
		must(t, 0, append(g, "rm", id)...)
		must(t, 0, append(g, "prune")...)

		for _, flags := range [][]string{{"--pty"}, {"--max-log-size", "1M"}} {
			code, _, errs := bgjob(context.Background(), append(append(g, "run"), append(flags, "--", "true")...)...)
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "bgjob: error: "+c.Host()+": the host") {
				t.Errorf("run %v in busybox: exit %d, stderr %q; want one clear line", flags, code, errs)
			}
		}
	})
}

// TestContainerInterrupt: in a busybox container, whose setsid has no -f,
// a job gets INT as on any host: stop -s INT ends a sleep with 130 and
// leaves nothing running. (The wrapper was started as a background
// command there, so the job inherited INT and QUIT ignored, which no
// shell can trap again: stop -s INT ended only with the KILL after the
// grace, 137.)
func TestContainerInterrupt(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		g := []string{"-H", c.Host()}
		id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "sleep 300")...))
		must(t, 0, append(g, "stop", "-s", "INT", "--grace", "20s", id)...)
		must(t, 130, append(g, "wait", id)...)
		if j := statusOf(t, g, id); j.Status != jobdir.StatusKilled || j.Signal != "INT" || j.LiveProcesses != 0 {
			t.Errorf("stop -s INT: %+v, want killed by INT, nothing left", j)
		}
	})
}

// TestContainerTrapStatus: in a busybox container a script that traps
// the TERM of a stop ends with its own status, as on any host. (There the
// shell was run from a subshell, as busybox's ash names no file for its
// own sh: the TERM killed the subshell, and the job was killed 143.)
func TestContainerTrapStatus(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		g := []string{"-H", c.Host()}
		const script = `trap 'echo got TERM; exit 6' TERM; echo ready; sleep 300 & wait $!`
		// A script, and the same as words (sh -c …): busybox's ash
		// names no file for its applets, sh included.
		for _, command := range [][]string{{script}, {"sh", "-c", script}} {
			id := strings.TrimSpace(must(t, 0, append(append(g, "run", "-q", "--"), command...)...))
			must(t, 0, append(g, "wait", "--for", "^ready", "--timeout", "30s", id)...)
			must(t, 0, append(g, "stop", "--grace", "20s", id)...)
			must(t, 6, append(g, "wait", id)...)
			if j := statusOf(t, g, id); j.Status != jobdir.StatusExited || j.LiveProcesses != 0 {
				t.Errorf("%q after the stop: %+v, want exited 6, nothing left", command, j)
			}
			if out := must(t, 0, append(g, "logs", id)...); out != "ready\ngot TERM\n" {
				t.Errorf("%q logs: %q", command, out)
			}
		}
	})
}

// TestContainerRestartLost: a container that restarts makes its running
// jobs lost, never running.
func TestContainerRestartLost(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		g := []string{"-H", c.Host()}
		id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "sleep 300")...))
		if j := statusOf(t, g, id); j.Status != jobdir.StatusRunning {
			t.Fatalf("before the restart: %+v", j)
		}
		c.Restart(t)
		// A new process may take the job's pid: the first ones after a
		// restart are the same numbers.
		must(t, 0, append(g, "run", "-q", "--", "sleep 300")...)
		if j := statusOf(t, g, id); j.Status != jobdir.StatusLost {
			t.Fatalf("after the restart: %+v, want lost", j)
		}
	})
}

// TestContainerErrors: an absent container, a stopped one and a daemon
// that is down each get one clear line, fast, and the other hosts of a
// fan-out go on.
func TestContainerErrors(t *testing.T) {
	d := containertest.Start(t, ctr.Docker)
	up := d.Run(t)
	stopped := d.Run(t)
	stopped.Stop(t)
	for _, tc := range []struct {
		name, host, env, want string
	}{
		{"no such container", "docker://bgjob-test-none", "", "docker://bgjob-test-none: no such container"},
		{"stopped", stopped.Host(), "", stopped.Host() + ": container is not running (exited)"},
		{"daemon down", "docker://web", "unix:///nonexistent/docker.sock", "docker://web: no docker daemon answers at unix:///nonexistent/docker.sock"},
		{"ssh daemon", "docker://web", "ssh://me@far", "docker://web: DOCKER_HOST=ssh://me@far: an ssh:// daemon address is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("DOCKER_HOST", tc.env)
			}
			start := time.Now()
			code, _, errs := bgjob(context.Background(), "-H", tc.host, "status")
			if code != 1 || !strings.HasPrefix(errs, "bgjob: error: "+tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("status: exit %d, stderr %q; want one line %q", code, errs, tc.want)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %s", el)
			}
			// --json: one document on stdout, the error, and no list
			// before it.
			for _, verb := range [][]string{{"ls"}, {"status"}, {"prune"}, {"stop", "--all"}, {"wait", "x"}} {
				code, out, _ := bgjob(context.Background(), append(append([]string{"-H", tc.host}, verb...), "--json")...)
				var doc struct {
					Error string `json:"error"`
					Kind  string `json:"kind"`
				}
				dec := json.NewDecoder(strings.NewReader(out))
				if err := dec.Decode(&doc); code != 1 || err != nil || !strings.HasPrefix(doc.Error, tc.want) || dec.More() {
					t.Errorf("%s --json: exit %d, stdout %q; want one document with the error %q", verb[0], code, out, tc.want)
				}
			}
			// run on the host alone: the host's own line, not under
			// "starting job: " (the library's words for a launch).
			if code, _, errs := bgjob(context.Background(), "-H", tc.host, "run", "--", "true"); code != 1 || !strings.HasPrefix(errs, "bgjob: error: "+tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("run: exit %d, stderr %q; want one line %q", code, errs, tc.want)
			}
			if tc.env != "" {
				return
			}
			code, out, errs := bgjob(context.Background(), "-H", up.Host()+","+tc.host, "run", "--", "true")
			if code != 1 || !strings.Contains(out, up.Host()) || errs != "bgjob: error: "+tc.want+"\n" {
				t.Errorf("fan-out: exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
}

// TestContainerFanout: one run over three containers and an SSH host gives
// the job the same id everywhere, and ls and wait see all four.
func TestContainerFanout(t *testing.T) {
	t.Parallel()
	d := containertest.Start(t, ctr.Docker)
	_, _, sg := sshJobs(t)
	hosts := []string{d.Run(t).Host(), d.Run(t).Host(), d.Run(t).Host(), "bgjob-test"}
	file := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(file, []byte(strings.Join(hosts, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// sg is --root R --ssh-config F -H bgjob-test: the root is the SSH host's.
	g := []string{"--ssh-config", sg[3], "-H", "@" + file}
	id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "-n", "fan", "--", "echo on $(hostname); exit 4")...))
	must(t, 4, append(g, "wait", "fan")...)
	var jobs []struct {
		Host string       `json:"host"`
		Jobs []jobdir.Job `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(must(t, 0, append(g, "ls", "--json")...)), &jobs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range jobs {
		for _, j := range h.Jobs {
			if j.ID == id && code(toolJob{ExitCode: j.ExitCode}) == 4 {
				seen[h.Host] = true
			}
		}
	}
	if len(seen) != len(hosts) {
		t.Errorf("ls saw the job on %v, want %v; ls %+v", seen, hosts, jobs)
	}
}

// TestContainerMCP: the MCP server's host parameter reaches a container
// that --allow-host allows, and is refused one it does not.
func TestContainerMCP(t *testing.T) {
	t.Parallel()
	d := containertest.Start(t, ctr.Docker)
	c := d.Run(t)
	ts := startToolServer(t, "--allow-host", "docker://bgjob-test-*")
	var st toolJob
	ts.call("job_start", map[string]any{"command": "echo in container; exit 3", "host": c.Host(), "wait_sec": 30}, &st)
	if st.Host != c.Host() || code(st) != 3 || st.Output != "in container\n" {
		t.Fatalf("job_start: %+v", st)
	}
	// A container that is not there: the host's own words, as the CLI
	// prints them.
	res := ts.callRaw(context.Background(), "job_start", map[string]any{"command": "true", "host": "docker://bgjob-test-none"})
	if want := "docker://bgjob-test-none: no such container"; !res.IsError || !strings.Contains(resultText(res), want) || strings.Contains(resultText(res), "starting job") {
		t.Errorf("job_start on an absent container: %q, want %q alone", resultText(res), want)
	}
	res = ts.callRaw(context.Background(), "job_list", map[string]any{"host": "docker://web"})
	if !res.IsError || !strings.Contains(resultText(res), "not allowed") {
		t.Fatalf("a host --allow-host does not allow: %q", resultText(res))
	}
}

// TestContainerUnwritableRoot: a container user who cannot make the root
// is told by which host, and why, as on any host (TestUnwritableRoot).
func TestContainerUnwritableRoot(t *testing.T) {
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		host := d.Engine + "://bg@" + c.Name
		code, _, errs := bgjob(context.Background(), "-H", host, "--root", "/bgjob-root", "run", "--", "true")
		want := "bgjob: error: " + host + ": cannot create root /bgjob-root: permission denied on /: unusable root\n"
		if code != 1 || errs != want {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
		}
	})
}
