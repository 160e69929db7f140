package container_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	ctypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/runtime/container"
)

// TestExecNoShell: a container that cannot start sh (an image without
// one, a user it does not know) gets one line naming the host and the
// daemon's reason, not a bare exit status.
func TestExecNoShell(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		nosh := runNoShell(t, d)
		user := d.Engine + "://nobody9@" + d.Run(t).Name
		for _, tc := range []struct {
			name, host, want string
			kind             error
		}{
			{"no sh", d.Engine + "://" + nosh, d.Engine + "://" + nosh + ": cannot start sh in the container: ", container.ErrNoShell},
			// Podman refuses the exec; Docker's sh does not start.
			{"no user", user, user + ": ", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				r := dial(t, tc.host)
				err := r.Exec(ctx, "echo hi", nil, io.Discard)
				if err == nil || tc.kind != nil && !errors.Is(err, tc.kind) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Exec: %v; want one line starting %q (%v)", err, tc.want, tc.kind)
				}
				if tc.kind == nil && !strings.Contains(err.Error(), "nobody9") {
					t.Fatalf("Exec: %v; want the user named", err)
				}
				t.Log(err)
			})
		}
	})
}

// runNoShell starts a container of an image that holds busybox as
// /bin/sleep and nothing else, and returns its name.
func runNoShell(t *testing.T, d *containertest.Daemon) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const image = "bgjob-test-nosh:1"
	if _, err := d.Client.ImageInspect(ctx, image); err != nil {
		rootfs, err := containertest.BusyboxRootfs()
		if err != nil {
			t.Fatal(err)
		}
		// Keep the directories and busybox, named sleep.
		var buf bytes.Buffer
		tr, tw := tar.NewReader(bytes.NewReader(rootfs)), tar.NewWriter(&buf)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeDir && h.Name != "bin/busybox" {
				continue
			}
			if h.Name == "bin/busybox" {
				h.Name = "bin/sleep"
			}
			tw.WriteHeader(h)
			io.Copy(tw, tr)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		res, err := d.Client.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, image, client.ImageImportOptions{})
		if err != nil {
			t.Fatalf("importing %s: %v", image, err)
		}
		io.Copy(io.Discard, res)
		res.Close()
	}
	var b [4]byte
	rand.Read(b[:])
	name := "bgjob-test-nosh-" + hex.EncodeToString(b[:])
	hc := &ctypes.HostConfig{NetworkMode: "none"}
	if d.Engine == container.Podman {
		hc.Ulimits = []*ctypes.Ulimit{{Name: "nofile", Soft: 1024, Hard: 1024}, {Name: "nproc", Soft: 4096, Hard: 4096}}
	}
	if _, err := d.Client.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: name, Image: image, HostConfig: hc,
		Config: &ctypes.Config{Cmd: []string{"/bin/sleep", "100000"}, NetworkDisabled: true},
	}); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		d.Client.ContainerRemove(context.Background(), name, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := d.Client.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	return name
}
