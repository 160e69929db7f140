package container

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// engine speaks the few calls of the Engine API a runtime makes (container
// inspect, exec create, exec start with a hijacked stream, exec inspect)
// to one daemon, Docker's or Podman's Docker-compatible one, over one
// pool of connections.
//
// It is not github.com/moby/moby/client: that package imports
// github.com/distribution/reference, whose package init compiles its
// image-reference regular expressions in every process that links it,
// which more than doubled the instructions of every bgjob start, container
// host or not (docs/benchmarks.md). The tests drive the daemons with the
// official client (internal/containertest).
type engine struct {
	daemon  string // the daemon's address as configured, for messages
	network string // "unix" or "tcp"
	addr    string // socket path or host:port
	tls     *tls.Config
	http    *http.Client

	mu     sync.Mutex
	prefix string // "/vX.Y": DOCKER_API_VERSION's, or the daemon's once it refused unversioned calls
}

// defaultDocker is the Docker daemon's address when DOCKER_HOST is unset.
const defaultDocker = "unix:///var/run/docker.sock"

// newEngine returns an engine of the daemon at ep (ep.host "" for Docker's
// default socket). With fromEnv it reads, as the docker command does,
// DOCKER_API_VERSION (requests of that version; else the daemon's own,
// without asking it first) and, unless a docker context gave ep,
// DOCKER_CERT_PATH (TLS with its ca.pem, cert.pem and key.pem) and
// DOCKER_TLS_VERIFY (verify the daemon's certificate).
func newEngine(ep endpoint, fromEnv bool, getenv func(string) string) (*engine, error) {
	host := ep.host
	if host == "" {
		host = defaultDocker
	}
	e := &engine{daemon: host}
	if ep.context != "" {
		e.daemon += fmt.Sprintf(" (docker context %q)", ep.context)
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("daemon address %q: %v", host, err)
	}
	switch u.Scheme {
	case "unix":
		e.network, e.addr = "unix", u.Path
		if e.addr == "" {
			return nil, fmt.Errorf("daemon address %q: no socket path", host)
		}
	case "tcp", "http", "https":
		e.network, e.addr = "tcp", u.Host
		if u.Port() == "" {
			e.addr = net.JoinHostPort(u.Hostname(), "2375")
		}
		e.tls = ep.tls
	default:
		return nil, fmt.Errorf("daemon address %q: want unix:// or tcp://", host)
	}
	if fromEnv {
		if v := getenv("DOCKER_API_VERSION"); v != "" {
			e.prefix = "/v" + strings.TrimPrefix(v, "v")
		}
		if dir := getenv("DOCKER_CERT_PATH"); dir != "" && e.network == "tcp" && ep.context == "" {
			if e.tls, err = tlsConfig(dir, getenv("DOCKER_TLS_VERIFY") != ""); err != nil {
				return nil, err
			}
		}
	}
	e.http = &http.Client{Transport: &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return e.dial(ctx) },
		MaxIdleConnsPerHost: maxExecs,
		IdleConnTimeout:     idleConnTimeout,
	}}
	return e, nil
}

// tlsConfig reads the client certificate and the authority of the
// daemon's from dir, as the docker command does.
func tlsConfig(dir string, verify bool) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %v", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, InsecureSkipVerify: !verify}
	if ca, err := os.ReadFile(filepath.Join(dir, "ca.pem")); err == nil {
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("DOCKER_CERT_PATH: no certificate in %s", filepath.Join(dir, "ca.pem"))
		}
	} else if verify {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %v", err)
	}
	return c, nil
}

// connError is a failure to reach the daemon at all.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// apiError is the daemon's refusal of a call: its status and message.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// statusOf returns the HTTP status of the daemon's refusal err, or 0.
func statusOf(err error) int {
	var a *apiError
	if errors.As(err, &a) {
		return a.status
	}
	return 0
}

func (e *engine) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, e.network, e.addr)
	if err != nil {
		return nil, &connError{err}
	}
	if e.tls == nil {
		return c, nil
	}
	cfg := e.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(e.addr)
	}
	t := tls.Client(c, cfg)
	if err := t.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, &connError{err}
	}
	return t, nil
}

// request builds a call of the API; body, when not nil, is sent as JSON.
func (e *engine) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	e.mu.Lock()
	prefix := e.prefix
	e.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, method, "http://engine"+prefix+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Requests carry no version: the daemon answers them in its own, without
// a ping first. The Engine documents unversioned calls as deprecated; a
// daemon that has dropped them answers "page not found", and the engine
// then asks the daemon's version once (GET /_ping) and calls again with it.

// versioned reports whether err is a daemon's refusal of an unversioned
// call, and if so takes the daemon's version for the calls to come.
func (e *engine) versioned(ctx context.Context, err error) bool {
	var a *apiError
	if !errors.As(err, &a) || a.status != http.StatusNotFound || !strings.Contains(a.msg, "page not found") {
		return false
	}
	e.mu.Lock()
	pinned := e.prefix != ""
	e.mu.Unlock()
	if pinned {
		return false
	}
	req, err := e.request(ctx, http.MethodGet, "/_ping", nil)
	if err != nil {
		return false
	}
	res, err := e.http.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	v := res.Header.Get("Api-Version")
	if v == "" {
		return false
	}
	e.mu.Lock()
	e.prefix = "/v" + v
	e.mu.Unlock()
	return true
}

// call makes one call and decodes its JSON answer into out (nil: drop
// it), once more with the daemon's version if it refused it without.
func (e *engine) call(ctx context.Context, method, path string, body, out any) error {
	err := e.call1(ctx, method, path, body, out)
	if err != nil && e.versioned(ctx, err) {
		err = e.call1(ctx, method, path, body, out)
	}
	return err
}

func (e *engine) call1(ctx context.Context, method, path string, body, out any) error {
	req, err := e.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	res, err := e.http.Do(req)
	if err != nil {
		// Every failure here is the link's: the daemon's answers are
		// refusals, below.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var ce *connError
		switch {
		case errors.As(err, &ce):
			return ce
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return &connError{err}
	}
	defer res.Body.Close()
	if err := refusal(res); err != nil {
		return err
	}
	if out == nil {
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// refusal returns the daemon's error answer as an *apiError, or nil for a
// success.
func refusal(res *http.Response) error {
	if res.StatusCode < 400 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var m struct{ Message string }
	if json.Unmarshal(b, &m) != nil || m.Message == "" {
		m.Message = strings.TrimSpace(string(b))
	}
	if m.Message == "" {
		m.Message = res.Status
	}
	return &apiError{status: res.StatusCode, msg: m.Message}
}

// containerState is what a runtime needs of a container.
type containerState struct {
	State *struct {
		Status  string
		Running bool
		Paused  bool
	}
}

func (e *engine) inspectContainer(ctx context.Context, name string) (containerState, error) {
	var c containerState
	err := e.call(ctx, http.MethodGet, "/containers/"+url.PathEscape(name)+"/json", nil, &c)
	return c, err
}

// execConfig is the body of exec create.
type execConfig struct {
	User         string   `json:",omitempty"`
	AttachStdin  bool     `json:",omitempty"`
	AttachStdout bool     `json:",omitempty"`
	AttachStderr bool     `json:",omitempty"`
	Cmd          []string `json:",omitempty"`
}

func (e *engine) execCreate(ctx context.Context, container string, cfg execConfig) (string, error) {
	var created struct {
		ID string `json:"Id"`
	}
	if err := e.call(ctx, http.MethodPost, "/containers/"+url.PathEscape(container)+"/exec", cfg, &created); err != nil {
		return "", err
	}
	if created.ID == "" {
		return "", errors.New("exec create: the daemon gave no exec id")
	}
	return created.ID, nil
}

// stream is an exec's hijacked connection: the multiplexed output is read
// from Reader, input written to Conn.
type stream struct {
	net.Conn
	Reader *bufio.Reader
}

// closeWrite ends the exec's input, keeping its output open.
func (s stream) closeWrite() {
	if cw, ok := s.Conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// execStart starts exec id attached: its own connection, switched from
// HTTP to the raw stream.
func (e *engine) execStart(ctx context.Context, id string) (stream, error) {
	req, err := e.request(ctx, http.MethodPost, "/exec/"+url.PathEscape(id)+"/start", struct{ Detach, Tty bool }{})
	if err != nil {
		return stream{}, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	c, err := e.dial(ctx)
	if err != nil {
		return stream{}, err
	}
	// ctx bounds the start; the stream then lives until closed.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	err = req.Write(c)
	br := bufio.NewReader(c)
	var res *http.Response
	if err == nil {
		res, err = http.ReadResponse(br, req)
	}
	if !stop() {
		c.Close()
		return stream{}, ctx.Err()
	}
	if err != nil {
		c.Close()
		return stream{}, &connError{err}
	}
	if res.StatusCode != http.StatusSwitchingProtocols && res.StatusCode != http.StatusOK {
		err := refusal(res)
		res.Body.Close()
		c.Close()
		if err == nil {
			err = fmt.Errorf("exec start: %s", res.Status)
		}
		return stream{}, err
	}
	return stream{Conn: c, Reader: br}, nil
}

func (e *engine) execInspect(ctx context.Context, id string) (running bool, code int, err error) {
	var x struct {
		Running  bool
		ExitCode int
	}
	err = e.call(ctx, http.MethodGet, "/exec/"+url.PathEscape(id)+"/json", nil, &x)
	return x.Running, x.ExitCode, err
}

func (e *engine) close() { e.http.CloseIdleConnections() }
