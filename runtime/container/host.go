package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Engines are the schemes of container hosts.
const (
	Docker = "docker"
	Podman = "podman"
)

// Address is a container host: "docker://[USER@]CONTAINER" or
// "podman://[USER@]CONTAINER".
type Address struct {
	Engine    string // Docker or Podman
	User      string // the user execs run as; "" for the container's
	Container string // name or id
}

// IsHost reports whether host names a container (has a docker:// or
// podman:// scheme) rather than an SSH host.
func IsHost(host string) bool {
	return strings.HasPrefix(host, Docker+"://") || strings.HasPrefix(host, Podman+"://")
}

// ParseAddress parses a container host. It fails when host has no
// container scheme or names no container.
func ParseAddress(host string) (Address, error) {
	engine, rest, ok := strings.Cut(host, "://")
	if !ok || engine != Docker && engine != Podman {
		return Address{}, fmt.Errorf("%s: not a container host (docker://CONTAINER or podman://CONTAINER)", host)
	}
	a := Address{Engine: engine, Container: rest}
	if u, c, ok := strings.Cut(rest, "@"); ok {
		a.User, a.Container = u, c
		if u == "" {
			return Address{}, fmt.Errorf("%s: empty user before @", host)
		}
	}
	if a.Container == "" || strings.ContainsAny(a.Container, "/ \t") {
		return Address{}, fmt.Errorf("%s: want %s://[USER@]CONTAINER", host, engine)
	}
	return a, nil
}

// errSSHDaemon is returned for a daemon reached over ssh://, which the
// Engine API client cannot dial.
var errSSHDaemon = errors.New("an ssh:// daemon address is not supported: use a unix:// or tcp:// address, or run bgjob on the daemon's host")

// daemonHost returns the endpoint of the daemon of engine, from env. For
// Docker: DOCKER_HOST; else the docker context DOCKER_CONTEXT names, else
// the current one (dockerContext); else the client's default,
// unix:///var/run/docker.sock. As for the docker command, DOCKER_HOST wins
// over DOCKER_CONTEXT when both are set: a non-empty DOCKER_HOST selects
// the "default" context, which is DOCKER_HOST's daemon. For Podman, which
// has no docker contexts: CONTAINER_HOST, else its socket under
// XDG_RUNTIME_DIR when that exists, else /run/podman/podman.sock.
func daemonHost(engine string, env func(string) string) (endpoint, error) {
	var h, name string
	switch engine {
	case Docker:
		name, h = "DOCKER_HOST", env("DOCKER_HOST")
		if h == "" {
			return dockerContext(env)
		}
	case Podman:
		name, h = "CONTAINER_HOST", env("CONTAINER_HOST")
		if h == "" {
			h = "unix:///run/podman/podman.sock"
			if x := env("XDG_RUNTIME_DIR"); x != "" {
				p := filepath.Join(x, "podman", "podman.sock")
				if _, err := os.Stat(p); err == nil {
					h = "unix://" + p
				}
			}
		}
	}
	if strings.HasPrefix(h, "ssh://") {
		return endpoint{}, fmt.Errorf("%s=%s: %w", name, h, errSSHDaemon)
	}
	return endpoint{host: h}, nil
}
