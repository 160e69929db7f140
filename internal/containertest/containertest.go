// Package containertest gives tests running containers of a real daemon:
// Docker's (dockerd) or Podman's Docker-compatible service. It starts no
// daemon: .ci/run does. Without one a test is skipped, with a message
// naming what is missing, except under CI (CI set), where that is a
// failure.
//
// Images are built offline from this machine's static busybox (Debian's
// busybox-static): a root file system with busybox and its applets, an
// /etc/passwd and a 1777 /tmp, imported as BusyboxImage; and, for what
// busybox cannot do (run --pty, --max-log-size), the same with the
// host's own util-linux script, flock and fallocate, bash and dash, and
// their shared libraries, imported as PTYImage.
package containertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/bgjob/bgjob/internal/testneed"
	ctr "github.com/bgjob/bgjob/runtime/container"
)

// BusyboxImage is the image of busybox containers (BusyboxRootfs).
const BusyboxImage = "bgjob-test-busybox:1"

// PTYImage is the image of containers that can run --pty and
// --max-log-size jobs (PTYRootfs). A daemon that has it keeps it: change
// the tag when what goes into it changes.
const PTYImage = "bgjob-test-pty:1"

// Daemon is a daemon the tests reach.
type Daemon struct {
	Engine string // ctr.Docker or ctr.Podman
	Client *client.Client
}

// Start returns the daemon of engine, reached as the runtime reaches it
// (DOCKER_HOST, CONTAINER_HOST, the default sockets), with BusyboxImage
// imported.
func Start(t testing.TB, engine string) *Daemon {
	t.Helper()
	d, err := connect(engine)
	if err == nil {
		err = d.image(BusyboxImage, BusyboxRootfs)
	}
	if err != nil {
		testneed.Missing(t, "containertest: %v (.ci/run installs and starts it)", err)
	}
	t.Cleanup(func() { d.Client.Close() })
	return d
}

func connect(engine string) (*Daemon, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	var want string
	switch engine {
	case ctr.Docker:
		want = "a docker daemon (apt-get install docker.io; dockerd --bridge=none --iptables=false --ip-forward=false)"
		opts = append(opts, client.FromEnv)
	case ctr.Podman:
		want = "podman's service (apt-get install podman; podman system service --time=0)"
		h := os.Getenv("CONTAINER_HOST")
		if h == "" {
			h = "unix:///run/podman/podman.sock"
			if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
				if _, err := os.Stat(x + "/podman/podman.sock"); err == nil {
					h = "unix://" + x + "/podman/podman.sock"
				}
			}
		}
		opts = append(opts, client.WithHost(h))
	default:
		return nil, fmt.Errorf("unknown engine %q", engine)
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", want, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx, client.PingOptions{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("needs %s: %v", want, err)
	}
	return &Daemon{Engine: engine, Client: c}, nil
}

// image imports name, a root file system rootfs returns, unless the
// daemon has it.
func (d *Daemon) image(name string, rootfs func() ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.Client.ImageInspect(ctx, name); err == nil {
		return nil
	}
	tar, err := rootfs()
	if err != nil {
		return err
	}
	res, err := d.Client.ImageImport(ctx, client.ImageImportSource{Source: bytes.NewReader(tar), SourceName: "-"}, name, client.ImageImportOptions{})
	if err != nil {
		return fmt.Errorf("importing %s: %v", name, err)
	}
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	return err
}

// pid1 is the containers' first process: it reaps the orphans that end
// (the jobs' wrappers are orphans once their launcher exits), as an init
// does, and ends on TERM.
const pid1 = `trap 'exit 0' TERM; while :; do sleep 1000 & wait; done`

// Container is a running container of BusyboxImage or PTYImage.
type Container struct {
	Name string
	d    *Daemon
}

// Host returns the container as a bgjob host, ENGINE://NAME.
func (c *Container) Host() string { return c.d.Engine + "://" + c.Name }

// Run starts a container of BusyboxImage without network and removes it
// when the test ends.
func (d *Daemon) Run(t testing.TB) *Container {
	t.Helper()
	return d.runImage(t, BusyboxImage)
}

// RunPTY starts a container of PTYImage, imported first unless the daemon
// has it, without network, and removes it when the test ends. A machine
// without what goes into the image ends the test (testneed.Missing).
func (d *Daemon) RunPTY(t testing.TB) *Container {
	t.Helper()
	if err := d.image(PTYImage, PTYRootfs); err != nil {
		testneed.Missing(t, "containertest: %v (.ci/run installs it)", err)
	}
	return d.runImage(t, PTYImage)
}

func (d *Daemon) runImage(t testing.TB, image string) *Container {
	t.Helper()
	c, err := d.run(image)
	if err != nil {
		t.Fatalf("containertest: %v", err)
	}
	t.Cleanup(func() { c.Remove() })
	return c
}

func (d *Daemon) run(image string) (*Container, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b [4]byte
	rand.Read(b[:])
	name := "bgjob-test-" + hex.EncodeToString(b[:])
	hc := &container.HostConfig{NetworkMode: "none"}
	if d.Engine == ctr.Podman {
		// Podman cannot raise its default rlimits on every machine.
		hc.Ulimits = []*units.Ulimit{{Name: "nofile", Soft: 1024, Hard: 1024}, {Name: "nproc", Soft: 4096, Hard: 4096}}
	}
	_, err := d.Client.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: name, Image: image, HostConfig: hc,
		Config: &container.Config{Cmd: []string{"sh", "-c", pid1}, NetworkDisabled: true},
	})
	if err != nil {
		return nil, fmt.Errorf("creating a container: %v", err)
	}
	c := &Container{Name: name, d: d}
	if _, err := d.Client.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
		c.Remove()
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	return c, nil
}

// Stop stops the container, at once.
func (c *Container) Stop(t testing.TB) {
	t.Helper()
	zero := 0
	if _, err := c.d.Client.ContainerStop(context.Background(), c.Name, client.ContainerStopOptions{Timeout: &zero}); err != nil {
		t.Fatalf("stopping %s: %v", c.Name, err)
	}
}

// Restart restarts the container, killing every process in it.
func (c *Container) Restart(t testing.TB) {
	t.Helper()
	zero := 0
	if _, err := c.d.Client.ContainerRestart(context.Background(), c.Name, client.ContainerRestartOptions{Timeout: &zero}); err != nil {
		t.Fatalf("restarting %s: %v", c.Name, err)
	}
}

// Remove removes the container, running or not.
func (c *Container) Remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.d.Client.ContainerRemove(ctx, c.Name, client.ContainerRemoveOptions{Force: true})
	return err
}
