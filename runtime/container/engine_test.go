package container_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/runtime/container"
)

// The daemon reached over tcp:// (Docker's and Podman's) and over TLS with
// DOCKER_CERT_PATH and DOCKER_TLS_VERIFY (Docker's), through a proxy on
// loopback to the daemon's own socket: scripts run, input and output
// cross it whole, and a daemon whose certificate no authority in
// DOCKER_CERT_PATH signed is refused with one clear line.
func TestDaemonOverTCP(t *testing.T) {
	engines(t, func(t *testing.T, d *containertest.Daemon) {
		c := d.Run(t)
		sock, ok := strings.CutPrefix(d.Client.DaemonHost(), "unix://")
		if !ok {
			t.Fatalf("the tests' daemon is at %s, not a unix socket", d.Client.DaemonHost())
		}
		hostVar := "DOCKER_HOST"
		if d.Engine == container.Podman {
			hostVar = "CONTAINER_HOST"
		}
		exec := func(t *testing.T, env map[string]string) error {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := container.Dial(ctx, c.Host(), container.Options{Getenv: func(k string) string { return env[k] }})
			if err != nil {
				return err
			}
			defer r.Close()
			var out bytes.Buffer
			if err := r.Exec(ctx, "tr a-z A-Z; echo done", strings.NewReader("over tcp\n"), &out); err != nil {
				return err
			}
			if got := out.String(); got != "OVER TCP\ndone\n" {
				t.Errorf("output %q, want %q", got, "OVER TCP\ndone\n")
			}
			return nil
		}

		t.Run("tcp", func(t *testing.T) {
			addr := proxy(t, sock, nil)
			if err := exec(t, map[string]string{hostVar: "tcp://" + addr}); err != nil {
				t.Fatal(err)
			}
			if d.Engine == container.Docker {
				if err := exec(t, map[string]string{hostVar: "tcp://" + addr, "DOCKER_API_VERSION": "1.41"}); err != nil {
					t.Fatalf("DOCKER_API_VERSION=1.41: %v", err)
				}
			}
		})
		t.Run("versioned calls only", func(t *testing.T) {
			// A daemon that has dropped unversioned calls: the engine asks
			// its version once and calls again with it.
			var refused atomic.Int32
			rp := &httputil.ReverseProxy{
				Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "daemon" },
				Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", sock)
				}},
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/_ping" && !strings.HasPrefix(r.URL.Path, "/v1.") {
					refused.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, `{"message":"page not found"}`)
					return
				}
				rp.ServeHTTP(w, r)
			}))
			defer srv.Close()
			if err := exec(t, map[string]string{hostVar: "tcp://" + srv.Listener.Addr().String()}); err != nil {
				t.Fatal(err)
			}
			if n := refused.Load(); n != 1 {
				t.Errorf("%d unversioned calls refused, want 1 (the first)", n)
			}
		})
		if d.Engine != container.Docker {
			return
		}
		certs, serverTLS := testCerts(t)
		addr := proxy(t, sock, serverTLS)
		t.Run("tls", func(t *testing.T) {
			if err := exec(t, map[string]string{hostVar: "tcp://" + addr, "DOCKER_CERT_PATH": certs, "DOCKER_TLS_VERIFY": "1"}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("tls, unknown authority", func(t *testing.T) {
			other, _ := testCerts(t)
			err := exec(t, map[string]string{hostVar: "tcp://" + addr, "DOCKER_CERT_PATH": other, "DOCKER_TLS_VERIFY": "1"})
			want := c.Host() + ": cannot reach the docker daemon at tcp://" + addr + ": "
			if !errors.Is(err, container.ErrDaemon) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Dial: %v; want one line starting %q", err, want)
			}
		})
		t.Run("docker context", func(t *testing.T) {
			// DOCKER_CONTEXT naming a context of the daemon's socket; the
			// current context, over TLS with the context's own files
			// (DOCKER_CERT_PATH, which would fail, is not read for it);
			// DOCKER_HOST over both.
			cfg := t.TempDir()
			files := map[string][]byte{}
			for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
				b, err := os.ReadFile(filepath.Join(certs, f))
				if err != nil {
					t.Fatal(err)
				}
				files[f] = b
			}
			container.WriteDockerContext(t, cfg, "sock", "unix://"+sock, false, nil)
			container.WriteDockerContext(t, cfg, "over tls", "tcp://"+addr, false, files)
			if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"currentContext": "over tls"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			other, _ := testCerts(t)
			for _, env := range []map[string]string{
				{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "sock"},
				{"DOCKER_CONFIG": cfg, "DOCKER_CERT_PATH": other, "DOCKER_TLS_VERIFY": "1"},
				{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "gone", "DOCKER_HOST": "unix://" + sock},
			} {
				if err := exec(t, env); err != nil {
					t.Errorf("%v: %v", env, err)
				}
			}
		})
	})
}

// proxy forwards connections on a loopback port to the unix socket sock,
// each half closed when its source ends; with cfg, it speaks TLS.
func proxy(t *testing.T, sock string, cfg *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				var front net.Conn = c
				if cfg != nil {
					tc := tls.Server(c, cfg)
					if tc.Handshake() != nil {
						return
					}
					front = tc
				}
				back, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer back.Close()
				done := make(chan struct{})
				go func() {
					io.Copy(back, front)
					back.(*net.UnixConn).CloseWrite()
					close(done)
				}()
				io.Copy(front, back)
				if cw, ok := front.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				}
				<-done
			})
		}
	})
	return l.Addr().String()
}

// testCerts makes an authority, a server certificate for 127.0.0.1 and a
// client certificate, both signed by it, and writes the client's side
// (ca.pem, cert.pem, key.pem) to a directory as DOCKER_CERT_PATH holds
// it. The server's config asks for a client certificate the authority
// signed.
func testCerts(t *testing.T) (dir string, server *tls.Config) {
	t.Helper()
	dir = t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bgjob test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte) {
		k := key()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "bgjob test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return pair, certPEM, keyPEM
	}
	serverPair, _, _ := leaf(2, x509.ExtKeyUsageServerAuth)
	_, clientCert, clientKey := leaf(3, x509.ExtKeyUsageClientAuth)
	for name, b := range map[string][]byte{
		"ca.pem":   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"cert.pem": clientCert,
		"key.pem":  clientKey,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return dir, &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
}
