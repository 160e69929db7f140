package container

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeContext stores a docker context as `docker context create` does:
// dir/contexts/meta/<sha256 of name>/meta.json, and the TLS files given
// in dir/contexts/tls/<the same>/docker/.
func writeContext(t *testing.T, dir, name, host string, skipVerify bool, tlsFiles map[string][]byte) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	meta := map[string]any{
		"Name":      name,
		"Metadata":  map[string]any{"Description": "a test context"},
		"Endpoints": map[string]any{"docker": map[string]any{"Host": host, "SkipTLSVerify": skipVerify}},
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "contexts", "meta", id, "meta.json"), b)
	for f, b := range tlsFiles {
		write(t, filepath.Join(dir, "contexts", "tls", id, "docker", f), b)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// selfSigned returns a certificate and its key, PEM-encoded.
func selfSigned(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bgjob test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestDockerContext: where docker:// finds its daemon, from DOCKER_HOST,
// DOCKER_CONTEXT, the current context of the docker configuration
// (DOCKER_CONFIG, else ~/.docker) and the contexts stored there, as the
// docker command does; podman:// reads none of them.
func TestDockerContext(t *testing.T) {
	cert, key := selfSigned(t)
	cfgDir := t.TempDir() // DOCKER_CONFIG
	writeContext(t, cfgDir, "remote", "tcp://10.1.2.3:2376", false, map[string][]byte{"ca.pem": cert, "cert.pem": cert, "key.pem": key})
	writeContext(t, cfgDir, "insecure", "tcp://10.1.2.3:2376", true, nil)
	writeContext(t, cfgDir, "plain", "tcp://10.1.2.3:2375", false, nil)
	writeContext(t, cfgDir, "sock", "unix:///run/other/docker.sock", false, map[string][]byte{"ca.pem": []byte("not a certificate")})
	writeContext(t, cfgDir, "badca", "tcp://10.1.2.3:2376", false, map[string][]byte{"ca.pem": []byte("not a certificate")})
	writeContext(t, cfgDir, "far", "ssh://me@far", false, nil)
	write(t, filepath.Join(cfgDir, "config.json"), []byte(`{"auths": {}, "currentContext": "plain"}`))

	home := t.TempDir() // HOME, with ~/.docker
	writeContext(t, filepath.Join(home, ".docker"), "homectx", "unix:///run/home/docker.sock", false, nil)
	write(t, filepath.Join(home, ".docker", "config.json"), []byte(`{"currentContext": "homectx"}`))

	broken := t.TempDir()
	write(t, filepath.Join(broken, "config.json"), []byte(`{"currentContext": `))
	missing := t.TempDir()
	write(t, filepath.Join(missing, "config.json"), []byte(`{"currentContext": "gone"}`))

	type want struct {
		host, context string
		tls           string // "": none, "verify", "skip"
		certs         int    // client certificates
		err           string // a prefix of the error
	}
	for _, tc := range []struct {
		name   string
		engine string
		env    map[string]string
		want   want
	}{
		{"nothing set", Docker, nil, want{}},
		{"DOCKER_HOST", Docker, map[string]string{"DOCKER_HOST": "unix:///run/h.sock"}, want{host: "unix:///run/h.sock"}},
		// docker's resolveContextName: a non-empty DOCKER_HOST selects the
		// default context, whatever DOCKER_CONTEXT says.
		{"DOCKER_HOST wins over DOCKER_CONTEXT", Docker, map[string]string{"DOCKER_HOST": "unix:///run/h.sock", "DOCKER_CONTEXT": "remote", "DOCKER_CONFIG": cfgDir}, want{host: "unix:///run/h.sock"}},
		{"DOCKER_HOST wins over a missing context", Docker, map[string]string{"DOCKER_HOST": "unix:///run/h.sock", "DOCKER_CONTEXT": "gone", "DOCKER_CONFIG": cfgDir}, want{host: "unix:///run/h.sock"}},
		{"current context", Docker, map[string]string{"DOCKER_CONFIG": cfgDir}, want{host: "tcp://10.1.2.3:2375", context: "plain"}},
		{"DOCKER_CONTEXT wins over the current context", Docker, map[string]string{"DOCKER_CONTEXT": "remote", "DOCKER_CONFIG": cfgDir}, want{host: "tcp://10.1.2.3:2376", context: "remote", tls: "verify", certs: 1}},
		{"DOCKER_CONTEXT default", Docker, map[string]string{"DOCKER_CONTEXT": "default", "DOCKER_CONFIG": cfgDir}, want{}},
		{"SkipTLSVerify", Docker, map[string]string{"DOCKER_CONTEXT": "insecure", "DOCKER_CONFIG": cfgDir}, want{host: "tcp://10.1.2.3:2376", context: "insecure", tls: "skip"}},
		{"no TLS to a socket", Docker, map[string]string{"DOCKER_CONTEXT": "sock", "DOCKER_CONFIG": cfgDir}, want{host: "unix:///run/other/docker.sock", context: "sock"}},
		{"HOME's configuration", Docker, map[string]string{"HOME": home}, want{host: "unix:///run/home/docker.sock", context: "homectx"}},
		{"DOCKER_CONFIG over HOME", Docker, map[string]string{"HOME": home, "DOCKER_CONFIG": t.TempDir()}, want{}},
		{"missing DOCKER_CONTEXT", Docker, map[string]string{"DOCKER_CONTEXT": "x", "DOCKER_CONFIG": cfgDir}, want{err: `docker context "x" not found (named by DOCKER_CONTEXT)`}},
		{"missing DOCKER_CONTEXT, no configuration", Docker, map[string]string{"DOCKER_CONTEXT": "x"}, want{err: `docker context "x" not found (named by DOCKER_CONTEXT)`}},
		{"missing current context", Docker, map[string]string{"DOCKER_CONFIG": missing}, want{err: `docker context "gone" not found (named by the currentContext of ` + filepath.Join(missing, "config.json") + ")"}},
		{"broken configuration", Docker, map[string]string{"DOCKER_CONFIG": broken}, want{err: "reading the docker configuration " + filepath.Join(broken, "config.json") + ": "}},
		{"bad ca.pem", Docker, map[string]string{"DOCKER_CONTEXT": "badca", "DOCKER_CONFIG": cfgDir}, want{err: `docker context "badca": no certificate in `}},
		{"ssh", Docker, map[string]string{"DOCKER_CONTEXT": "far", "DOCKER_CONFIG": cfgDir}, want{err: `docker context "far" (ssh://me@far): an ssh:// daemon address is not supported`}},
		{"podman reads no docker context", Podman, map[string]string{"CONTAINER_HOST": "unix:///run/p.sock", "DOCKER_CONTEXT": "remote", "DOCKER_CONFIG": cfgDir}, want{host: "unix:///run/p.sock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := daemonHost(tc.engine, func(k string) string { return tc.env[k] })
			if tc.want.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want.err) {
					t.Fatalf("daemonHost: %+v, %v; want an error starting %q", ep, err, tc.want.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("daemonHost: %v", err)
			}
			got := want{host: ep.host, context: ep.context}
			if ep.tls != nil {
				got.tls, got.certs = "verify", len(ep.tls.Certificates)
				if ep.tls.InsecureSkipVerify {
					got.tls = "skip"
				}
				if got.tls == "verify" && ep.tls.RootCAs == nil {
					t.Errorf("TLS without the context's ca.pem")
				}
			}
			if got != tc.want {
				t.Fatalf("daemonHost: %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDialDockerContext: the errors of Dial and the first Exec name the
// docker context, and a context that is named but missing fails Dial
// before any daemon is asked, with an error of ErrDaemon's kind.
func TestDialDockerContext(t *testing.T) {
	cfgDir := t.TempDir()
	sock := filepath.Join(t.TempDir(), "none.sock")
	writeContext(t, cfgDir, "nowhere", "unix://"+sock, false, nil)
	for _, tc := range []struct {
		name, context, want string
	}{
		{"missing", "x", `docker://web: docker context "x" not found`},
		{"no daemon", "nowhere", `docker://web: no docker daemon answers at unix://` + sock + ` (docker context "nowhere")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DOCKER_CONTEXT": tc.context, "DOCKER_CONFIG": cfgDir}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r, err := Dial(ctx, "docker://web", Options{Getenv: func(k string) string { return env[k] }})
			if err == nil {
				err = r.Exec(ctx, "true", nil, nil)
				r.Close()
			}
			if !errors.Is(err, ErrDaemon) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Dial, Exec: %v; want %q (ErrDaemon)", err, tc.want)
			}
		})
	}
}
