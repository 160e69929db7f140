package container

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Docker contexts, read as the docker command reads them when DOCKER_HOST
// is unset (github.com/docker/cli, cli/command's resolveContextName and
// cli/context/store): the context DOCKER_CONTEXT names, else the
// "currentContext" of $DOCKER_CONFIG/config.json (~/.docker/config.json).
// A context named X is the file contexts/meta/<sha256 of X in hex>/meta.json
// under that directory, its TLS files are in contexts/tls/<the same>/docker/.

// defaultContext names the daemon of DOCKER_HOST, else the default socket.
const defaultContext = "default"

// endpoint is where a daemon listens and how to reach it.
type endpoint struct {
	host    string      // unix:// or tcp:// address; "" for Docker's default socket
	context string      // the docker context that gave host; "" for none
	tls     *tls.Config // the context's TLS (for a tcp:// host); nil for none
}

// dockerContext returns the endpoint of the docker context that env names
// (DOCKER_CONTEXT, else the current context of the docker configuration
// in DOCKER_CONFIG or HOME): the zero endpoint, Docker's default socket,
// for none or "default". A context that is named but not there is an
// error, not the default socket.
func dockerContext(env func(string) string) (endpoint, error) {
	dir := env("DOCKER_CONFIG")
	if dir == "" {
		if home := env("HOME"); home != "" {
			dir = filepath.Join(home, ".docker")
		}
	}
	name, from := env("DOCKER_CONTEXT"), "DOCKER_CONTEXT"
	if name == "" && dir != "" {
		cfg := filepath.Join(dir, "config.json")
		var err error
		if name, err = currentContext(cfg); err != nil {
			return endpoint{}, err
		}
		from = "the currentContext of " + cfg
	}
	if name == "" || name == defaultContext {
		return endpoint{}, nil
	}
	return loadContext(dir, name, from)
}

// currentContext returns the current context of the docker configuration
// file cfg, "" when it names none or does not exist.
func currentContext(cfg string) (string, error) {
	b, err := os.ReadFile(cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the docker configuration: %v", err)
	}
	var c struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("reading the docker configuration %s: %v", cfg, err)
	}
	return c.CurrentContext, nil
}

// loadContext returns the docker endpoint of the context name, stored
// under the configuration directory dir; from says where it was named.
func loadContext(dir, name, from string) (endpoint, error) {
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	notFound := fmt.Errorf("docker context %q not found (named by %s)", name, from)
	if dir == "" {
		return endpoint{}, notFound
	}
	meta := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return endpoint{}, notFound
	}
	if err != nil {
		return endpoint{}, fmt.Errorf("docker context %q: %v", name, err)
	}
	var m struct {
		Endpoints map[string]struct {
			Host          string
			SkipTLSVerify bool
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return endpoint{}, fmt.Errorf("docker context %q: %s: %v", name, meta, err)
	}
	ep, ok := m.Endpoints["docker"]
	if !ok {
		return endpoint{}, fmt.Errorf("docker context %q has no docker endpoint", name)
	}
	e := endpoint{host: ep.Host, context: name}
	if strings.HasPrefix(ep.Host, "ssh://") {
		return endpoint{}, fmt.Errorf("docker context %q (%s): %w", name, ep.Host, errSSHDaemon)
	}
	// As the docker command, no TLS to a socket.
	if ep.Host != "" && !strings.HasPrefix(ep.Host, "unix://") {
		if e.tls, err = contextTLS(filepath.Join(dir, "contexts", "tls", id, "docker"), ep.SkipTLSVerify); err != nil {
			return endpoint{}, fmt.Errorf("docker context %q: %v", name, err)
		}
	}
	return e, nil
}

// contextTLS returns the TLS of a context's endpoint from the files in
// dir, each optional: ca.pem (the daemon's authority, else the system's),
// cert.pem and key.pem (the client's certificate). As the docker command
// does, there is none when dir holds none of them and skipVerify is off.
func contextTLS(dir string, skipVerify bool) (*tls.Config, error) {
	var pem [3][]byte
	for i, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		pem[i] = b
	}
	ca, cert, key := pem[0], pem[1], pem[2]
	if ca == nil && cert == nil && key == nil && !skipVerify {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify}
	if ca != nil {
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("no certificate in %s", filepath.Join(dir, "ca.pem"))
		}
	}
	if cert != nil && key != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", dir, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
