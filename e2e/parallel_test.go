package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
)

// runParallel starts n jobs at once through the CLI and checks that every
// one got its own id and an intact meta.json.
func runParallel(t *testing.T, n int, global ...string) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			args := append([]string{"--root", root}, global...)
			args = append(args, "run", "-q", "--", "sleep 0.2")
			if code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
				t.Errorf("run %d: exit %d: %s", i, code, errb.String())
				return
			}
			ids[i] = strings.TrimSpace(out.String())
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !jobdir.IsID(id) || seen[id] {
			t.Fatalf("bad or duplicate id %q", id)
		}
		seen[id] = true
		b, err := os.ReadFile(filepath.Join(root, "default", id, jobdir.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		m, err := jobdir.DecodeMeta(b)
		if err != nil {
			t.Fatalf("meta.json of %s: %v: %q", id, err, b)
		}
		// The launcher writes the bytes jobdir encodes, no others.
		if enc, err := jobdir.EncodeMeta(m); err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("meta.json of %s is not jobdir's encoding:\n%q\n%q", id, b, enc)
		}
		if m.ID != id || m.PID <= 1 || m.ProcStart == "" || m.Command != "sleep 0.2" {
			t.Fatalf("meta.json of %s is not intact: %+v", id, m)
		}
	}
	// Count job directories by id: run's pruning pass keeps its lock and
	// cursor beside them.
	entries, _ := os.ReadDir(filepath.Join(root, "default"))
	dirs := 0
	for _, e := range entries {
		if jobdir.IsID(e.Name()) {
			dirs++
		}
	}
	if dirs != n {
		t.Fatalf("%d job directories, want %d", dirs, n)
	}
}

// TestParallelRun: 50 runs started at once get distinct ids and intact
// meta.json.
func TestParallelRun(t *testing.T) {
	t.Parallel()
	runParallel(t, 50)
}

// TestParallelRunSSH: 20 runs at once over SSH, each on its own connection.
func TestParallelRunSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	cfg := sshConfig(t, srv)
	runParallel(t, 20, "--ssh-config", cfg, "-H", "bgjob-test")
}

// sshJobs starts an sshd for the test and returns it, a job root that is
// cleaned up after the test, and the global flags that reach that root
// over SSH.
func sshJobs(t *testing.T) (*sshtest.Server, string, []string) {
	t.Helper()
	srv := sshtest.Start(t)
	cfg := sshConfig(t, srv)
	root := t.TempDir()
	t.Cleanup(func() { killAll(root) })
	return srv, root, []string{"--root", root, "--ssh-config", cfg, "-H", "bgjob-test"}
}

// sshConfig writes an ssh_config with the alias bgjob-test and a matching
// known_hosts, and returns the config's path.
func sshConfig(t *testing.T, srv *sshtest.Server) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := srv.WriteConfig(cfg, "bgjob-test"); err != nil {
		t.Fatal(err)
	}
	if err := srv.WriteKnownHosts(filepath.Join(dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	return cfg
}
