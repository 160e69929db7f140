package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/jobdir"
)

// TestContainerPorts: in a busybox container (its own network namespace,
// with /proc/net/tcp and tcp6 of its own, and no python3) a server on an
// auto port, busybox httpd, is found listening: wait --port returns it,
// status --json and status show it; a server that listens late (busybox
// nc) is waited for by its port; once the first server is stopped, its
// port is free for a new --port N.
func TestContainerPorts(t *testing.T) {
	t.Parallel()
	containerEngines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		g := []string{"-H", c.Host()}

		web := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "-n", "web", "--port", "auto", "--", `exec httpd -f -p "$PORT"`)...))
		port := statusOf(t, g, web).Port
		if port < 20000 || port > 29999 {
			t.Fatalf("run --port auto gave port %d, want one from 20000 to 29999", port)
		}
		// httpd listens on every address, IPv6 and IPv4 (::): found in the
		// container's /proc/net/tcp6.
		listens := fmt.Sprintf("%d/tcp (::)", port)
		if out := must(t, 0, append(g, "wait", "--port", "any", "--timeout", "30s", web)...); strings.TrimSpace(out) != listens {
			t.Errorf("wait --port any: %q, want %q", out, listens)
		}
		j := statusOf(t, g, web)
		if want := []jobdir.Port{{Port: port, Proto: "tcp", Address: "::"}}; fmt.Sprint(j.Ports) != fmt.Sprint(want) {
			t.Errorf("status --json ports: %v, want %v", j.Ports, want)
		}
		if out := must(t, 0, append(g, "status", web)...); !regexp.MustCompile(`(?m)^ports: +` + regexp.QuoteMeta(listens) + `$`).MatchString(out) {
			t.Errorf("status does not say the port:\n%s", out)
		}

		// A port that comes late (nc, also on ::).
		late := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "-n", "late", "--port", "auto", "--", `sleep 1; exec nc -l -p "$PORT"`)...))
		lp := statusOf(t, g, late).Port
		if out := must(t, 0, append(g, "wait", "--port", strconv.Itoa(lp), "--timeout", "30s", late)...); strings.TrimSpace(out) != fmt.Sprintf("%d/tcp (::)", lp) {
			t.Errorf("wait --port %d: %q", lp, out)
		}

		// Stopped, the server's port is free for another job at once.
		must(t, 0, append(g, "stop", web)...)
		next := must(t, 0, append(g, "run", "-q", "--port", strconv.Itoa(port), "--ready-port", strconv.Itoa(port), "--", `exec nc -l -p "$PORT"`)...)
		if statusOf(t, g, strings.TrimSpace(next)).Port != port {
			t.Errorf("the run that took port %d over has port %d", port, statusOf(t, g, strings.TrimSpace(next)).Port)
		}
		must(t, 0, append(g, "stop", "--all")...)
	})
}
