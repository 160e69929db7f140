package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/containertest"
	ctr "github.com/bgjob/bgjob/runtime/container"
)

// TestContainerDockerContext: with DOCKER_HOST unset, docker:// reaches
// the daemon of the docker context that DOCKER_CONTEXT names (stored in
// DOCKER_CONFIG as the docker command stores it): a job runs there, a
// context whose daemon does not answer says so naming the context, and a
// context that is named but missing is one clear line.
func TestContainerDockerContext(t *testing.T) {
	d := containertest.Start(t, ctr.Docker)
	c := d.Run(t)
	sock, ok := strings.CutPrefix(d.Client.DaemonHost(), "unix://")
	if !ok {
		t.Fatalf("the tests' daemon is at %s, not a unix socket", d.Client.DaemonHost())
	}
	// The daemon's socket by another name, that only the context gives.
	dir := t.TempDir()
	link := filepath.Join(dir, "docker.sock")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	for name, host := range map[string]string{"test-dockerd": "unix://" + link, "nowhere": "unix://" + filepath.Join(dir, "none.sock")} {
		sum := sha256.Sum256([]byte(name))
		meta := filepath.Join(cfg, "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json")
		if err := os.MkdirAll(filepath.Dir(meta), 0o700); err != nil {
			t.Fatal(err)
		}
		b := `{"Name":"` + name + `","Metadata":{},"Endpoints":{"docker":{"Host":"` + host + `","SkipTLSVerify":false}}}`
		if err := os.WriteFile(meta, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("DOCKER_HOST", "")
	t.Setenv("DOCKER_CONFIG", cfg)
	g := []string{"-H", c.Host()}

	t.Setenv("DOCKER_CONTEXT", "test-dockerd")
	id := strings.TrimSpace(must(t, 0, append(g, "run", "-q", "--", "echo through the context")...))
	must(t, 0, append(g, "wait", id)...)
	if out := must(t, 0, append(g, "logs", id)...); out != "through the context\n" {
		t.Errorf("logs: %q", out)
	}

	for _, tc := range []struct{ context, want string }{
		{"nowhere", c.Host() + ": no docker daemon answers at unix://" + filepath.Join(dir, "none.sock") + ` (docker context "nowhere")`},
		{"gone", c.Host() + `: docker context "gone" not found (named by DOCKER_CONTEXT)`},
	} {
		t.Setenv("DOCKER_CONTEXT", tc.context)
		code, _, errs := bgjob(context.Background(), append(g, "status", id)...)
		if code != 1 || errs != "bgjob: error: "+tc.want+"\n" {
			t.Errorf("DOCKER_CONTEXT=%s: exit %d, stderr %q; want 1 and one line %q", tc.context, code, errs, tc.want)
		}
	}
}
