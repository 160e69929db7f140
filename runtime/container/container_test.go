package container_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/runtime/container"
)

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		want       container.Address
		err        bool
	}{
		{"docker", "docker://web", container.Address{Engine: "docker", Container: "web"}, false},
		{"user", "docker://app@web", container.Address{Engine: "docker", User: "app", Container: "web"}, false},
		{"podman", "podman://0123abcd", container.Address{Engine: "podman", Container: "0123abcd"}, false},
		{"empty", "docker://", container.Address{}, true},
		{"empty user", "docker://@web", container.Address{}, true},
		{"path", "docker://a/b", container.Address{}, true},
		{"ssh", "web", container.Address{}, true},
		{"other scheme", "kubectl://pod", container.Address{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := container.ParseAddress(tc.host)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("ParseAddress(%q) = %+v, %v; want %+v, error %v", tc.host, got, err, tc.want, tc.err)
			}
		})
	}
}

// engines runs fn once per engine, as a subtest.
func engines(t *testing.T, fn func(t *testing.T, d *containertest.Daemon)) {
	for _, e := range []string{container.Docker, container.Podman} {
		t.Run(e, func(t *testing.T) {
			t.Parallel()
			fn(t, containertest.Start(t, e))
		})
	}
}

func dial(t *testing.T, host string) *container.Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := container.Dial(ctx, host, container.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestExec(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		r := dial(t, c.Host())
		ctx := context.Background()
		big := strings.Repeat("#", 200<<10) + "\necho big"
		lines := strings.Repeat("a line of the script's own stdin\n", 2000)
		for _, tc := range []struct {
			name, script, stdin, want string
			status                    int
		}{
			{"stdout", "echo out; echo err >&2", "", "out\n", 0},
			{"stdin", "cat; echo .", "in\n", "in\n.\n", 0},
			{"status", "echo partial; echo why >&2; exit 3", "", "partial\n", 3},
			{"bootstrap", big, "", "big\n", 0},
			// busybox's head -c read past the script, into its stdin.
			{"bootstrap, stdin", "cat\n" + big, lines, lines + "big\n", 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var out bytes.Buffer
				var in *strings.Reader
				if tc.stdin != "" {
					in = strings.NewReader(tc.stdin)
				}
				var err error
				if in != nil {
					err = r.Exec(ctx, tc.script, in, &out)
				} else {
					err = r.Exec(ctx, tc.script, nil, &out)
				}
				if got := out.String(); got != tc.want {
					t.Errorf("stdout %s, want %s", brief(got), brief(tc.want))
				}
				var exit *container.ExitError
				switch {
				case tc.status == 0 && err != nil:
					t.Fatalf("Exec: %v", err)
				case tc.status != 0 && (!errors.As(err, &exit) || exit.Status != tc.status || exit.Stderr != "why"):
					t.Fatalf("Exec: %v; want status %d with stderr \"why\"", err, tc.status)
				}
			})
		}
	})
}

// brief quotes s, or when it is long says how long and how it starts.
func brief(s string) string {
	if len(s) > 100 {
		return fmt.Sprintf("%d bytes starting %.40q", len(s), s)
	}
	return fmt.Sprintf("%q", s)
}

// TestExecUser: docker://USER@C runs the scripts as USER.
func TestExecUser(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		r := dial(t, d.Engine+"://bg@"+c.Name)
		var out bytes.Buffer
		if err := r.Exec(context.Background(), "id -u", nil, &out); err != nil || out.String() != "1000\n" {
			t.Fatalf("id -u: %q, %v; want 1000", out.String(), err)
		}
	})
}

// TestExecCancel: cancelling Exec ends the script's whole process group,
// with a second exec, even a script that never reads its stdin.
func TestExecCancel(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		r := dial(t, c.Host())
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		w := &signalWriter{seen: started}
		done := make(chan error, 1)
		go func() {
			done <- r.Exec(ctx, "trap '' TERM HUP INT; sleep 7001 & sleep 7002 & echo started; wait", nil, w)
		}()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("Exec ended early: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the script did not start")
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Exec: %v, want context.Canceled", err)
		}
		var out bytes.Buffer
		if err := r.Exec(context.Background(), "ps -o args | grep -c '[s]leep 700' || true", nil, &out); err != nil || out.String() != "0\n" {
			t.Fatalf("sleeps left after the cancel: %q, %v", out.String(), err)
		}
	})
}

type signalWriter struct {
	seen chan struct{}
	once bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.seen)
	}
	return len(p), nil
}

// TestDialErrors: each way a container cannot be reached is one clear
// error naming the host, fast, from Dial or else from the first Exec
// (Dial asks the daemon nothing).
func TestDialErrors(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		stopped := d.Run(t)
		stopped.Stop(t)
		paused := d.Run(t)
		if _, err := d.Client.ContainerPause(context.Background(), paused.Name, client.ContainerPauseOptions{}); err != nil {
			t.Fatalf("pausing %s: %v", paused.Name, err)
		}
		t.Cleanup(func() { d.Client.ContainerUnpause(context.Background(), paused.Name, client.ContainerUnpauseOptions{}) })
		sock := "DOCKER_HOST"
		if d.Engine == container.Podman {
			sock = "CONTAINER_HOST"
		}
		for _, tc := range []struct {
			name, host, env string
			want            error
			msg             string
		}{
			{"no such container", d.Engine + "://bgjob-test-none", "", container.ErrNoSuchContainer, d.Engine + "://bgjob-test-none: no such container"},
			{"stopped", stopped.Host(), "", container.ErrNotRunning, stopped.Host() + ": container is not running (exited)"},
			{"paused", paused.Host(), "", container.ErrNotRunning, paused.Host() + ": container is not running (paused)"},
			{"daemon down", d.Engine + "://web", "unix:///nonexistent/bgjob.sock", container.ErrDaemon, d.Engine + "://web: no " + d.Engine + " daemon answers at unix:///nonexistent/bgjob.sock"},
			{"ssh", d.Engine + "://web", "ssh://me@far", container.ErrDaemon, d.Engine + "://web: " + sock + "=ssh://me@far: an ssh:// daemon address is not supported"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				getenv := func(k string) string {
					if k == sock && tc.env != "" {
						return tc.env
					}
					return ""
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				r, err := container.Dial(ctx, tc.host, container.Options{Getenv: getenv})
				if err == nil {
					err = r.Exec(ctx, "true", nil, nil)
					r.Close()
				}
				if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), tc.msg) {
					t.Fatalf("Dial, Exec: %v; want %q (%v)", err, tc.msg, tc.want)
				}
			})
		}
	})
}
