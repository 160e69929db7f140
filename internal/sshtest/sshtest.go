//go:build !windows

// Package sshtest runs a real OpenSSH sshd on 127.0.0.1 for tests.
//
// The server listens on a free port, has freshly generated ed25519 and ECDSA
// host keys and accepts one generated, unencrypted ed25519 client key for the
// current user. Helpers write matching known_hosts and ssh_config files, so
// tests never depend on the real ~/.ssh.
//
// Start is for tests (it skips when sshd is not installed and stops the
// server in t.Cleanup); New and Close are for TestMain or testscript setups.
package sshtest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bgjob/bgjob/internal/testneed"
)

// SSHD is the absolute path of the OpenSSH server binary the package runs.
const SSHD = "/usr/sbin/sshd"

// Server is a running sshd and the files that belong to it.
type Server struct {
	// Addr is "127.0.0.1:PORT".
	Addr string
	// Port is the TCP port sshd listens on.
	Port int
	// Dir holds the server's config, keys, pid file and log.
	Dir string
	// User is the current user, the one the client key logs in as.
	User string
	// HostKeys are the server's public host keys: ed25519 first, then ECDSA.
	HostKeys []gossh.PublicKey
	// ClientKeyPath is the unencrypted ed25519 private key accepted by the
	// server; its public half is at ClientKeyPath+".pub".
	ClientKeyPath string
	// ConfigPath is the sshd_config file.
	ConfigPath string
	// LogPath is sshd's log (LogLevel VERBOSE).
	LogPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	orphans  []*os.Process // connection processes of listeners stopped by Restart
	closed   bool
	extraCfg []string
}

// Start starts an sshd for the test and stops it when the test ends. extra
// lines are appended to sshd_config. It skips the test when sshd is not
// installed, except under CI (CI set), where a missing sshd is a failure:
// .ci/run installs it, so SSH tests never skip there.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	if _, err := os.Stat(SSHD); err != nil {
		testneed.Missing(t, "sshtest: %s (openssh-server): %v", SSHD, err)
	}
	s, err := New(t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// New creates keys and config in dir, which must exist, and starts sshd.
// extra lines are appended to sshd_config. Call Close to stop it.
func New(dir string, extra ...string) (*Server, error) {
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("sshtest: current user: %w", err)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	s := &Server{
		Dir:           dir,
		User:          u.Username,
		ClientKeyPath: filepath.Join(dir, "id_ed25519"),
		ConfigPath:    filepath.Join(dir, "sshd_config"),
		LogPath:       filepath.Join(dir, "sshd.log"),
		extraCfg:      extra,
	}
	if err := s.writeKeys(); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
	}
	// A free port can be taken between probing and sshd's bind: retry.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		s.Port = port
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := s.writeConfig(); err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		if out, err := exec.Command(SSHD, "-t", "-f", s.ConfigPath).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sshtest: sshd -t: %v: %s", err, out)
		}
		err = s.start()
		if err == nil {
			return s, nil
		}
		if attempt == 3 {
			return nil, err
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeKeys() error {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	for _, k := range []struct {
		name string
		priv any
	}{
		{"ssh_host_ed25519_key", edPriv},
		{"ssh_host_ecdsa_key", ecPriv},
	} {
		pub, err := writeKeyPair(filepath.Join(s.Dir, k.name), k.priv)
		if err != nil {
			return err
		}
		s.HostKeys = append(s.HostKeys, pub)
	}
	_, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	pub, err := writeKeyPair(s.ClientKeyPath, clientPriv)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), gossh.MarshalAuthorizedKey(pub), 0o600)
}

// writeKeyPair writes priv in OpenSSH format to path and its public key to
// path.pub.
func writeKeyPair(path string, priv any) (gossh.PublicKey, error) {
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	pub := signer.PublicKey()
	return pub, os.WriteFile(path+".pub", gossh.MarshalAuthorizedKey(pub), 0o644)
}

func (s *Server) writeConfig() error {
	lines := []string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(s.Dir, "ssh_host_ed25519_key"),
		"HostKey " + filepath.Join(s.Dir, "ssh_host_ecdsa_key"),
		"PidFile " + filepath.Join(s.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin prohibit-password",
		"MaxStartups 100:30:200",
		"LogLevel VERBOSE",
	}
	// root's rc files on the CI machines run a slow pyenv init. sshd
	// takes the first SetEnv line only: an extra one's variables join it.
	setenv := "SetEnv SHLVL=1"
	var extra []string
	for _, l := range s.extraCfg {
		if v, ok := strings.CutPrefix(l, "SetEnv "); ok {
			setenv += " " + v
			continue
		}
		extra = append(extra, l)
	}
	lines = append(append(lines, setenv), extra...)
	return os.WriteFile(s.ConfigPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// start runs the listener in the foreground (-D) and waits until it answers.
func (s *Server) start() error {
	cmd := exec.Command(SSHD, "-D", "-f", s.ConfigPath, "-E", s.LogPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshtest: starting sshd: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("sshtest: sshd exited at start (%v); log:\n%s", cmd.ProcessState, s.logTail())
		default:
		}
		if ready(s.Addr) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshtest: sshd did not answer on %s within 10s; log:\n%s", s.Addr, s.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

// ready reports whether addr answers with an SSH banner.
func ready(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "SSH-")
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.LogPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Log returns sshd's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.LogPath)
	return string(b)
}

// stopListener ends the listening sshd, leaving the processes that serve
// established connections alone, and remembers those for Close.
func (s *Server) stopListener() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	children := children(cmd.Process.Pid)
	s.mu.Lock()
	s.orphans = append(s.orphans, children...)
	s.mu.Unlock()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	return nil
}

// Stop stops the listening sshd; connections already established stay up
// (each is served by its own sshd process), as with a service stop that
// kills only the main process. Start it again with Restart.
func (s *Server) Stop() error {
	return s.stopListener()
}

// Restart stops the listening sshd and starts it again on the same port
// with the same keys. Established connections stay up.
func (s *Server) Restart() error {
	if err := s.stopListener(); err != nil {
		return err
	}
	var err error
	for range 50 { // the port may linger briefly
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// DropConnections kills, with SIGKILL, every sshd process serving an
// established connection, as a crash or a dropped link would, and returns
// how many it killed; the listener stays up.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	procs := append([]*os.Process(nil), s.orphans...)
	var live []*os.Process
	if s.cmd != nil {
		live = children(s.cmd.Process.Pid)
	}
	s.mu.Unlock()
	n := 0
	for _, p := range append(procs, live...) {
		if p.Signal(syscall.SIGKILL) == nil {
			n++
		}
	}
	release(live)
	return n
}

// Close stops sshd and every process serving a connection to it.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var procs []*os.Process
	if s.cmd != nil {
		procs = children(s.cmd.Process.Pid)
	}
	s.mu.Unlock()
	err := s.stopListener()
	s.mu.Lock()
	procs = append(procs, s.orphans...)
	s.orphans = nil
	s.mu.Unlock()
	for _, p := range procs {
		p.Signal(syscall.SIGTERM)
	}
	release(procs)
	return err
}

// children returns handles on the direct children of pid (Linux /proc).
// A handle holds its process (a pidfd, Go 1.23+ on Linux), not its number:
// one that has ended and been reaped is signalled no more, even when its
// pid has gone to another process. A bare pid kept until Close once
// SIGTERMed such a process, a script of another test.
func children(pid int) []*os.Process {
	var procs []*os.Process
	for _, c := range childPIDs(pid) {
		p, err := os.FindProcess(c)
		if err != nil {
			continue
		}
		// The handle was opened after the look: keep it only if the pid
		// was still pid's child then.
		if parent(c) != pid {
			p.Release()
			continue
		}
		procs = append(procs, p)
	}
	return procs
}

// release releases the handles of children.
func release(procs []*os.Process) {
	for _, p := range procs {
		p.Release()
	}
}

// childPIDs lists the direct children of pid (Linux /proc).
func childPIDs(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && parent(n) == pid {
			pids = append(pids, n)
		}
	}
	return pids
}

// parent returns the parent pid of pid, 0 when it cannot be read.
func parent(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command: state ppid ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// KnownHostsName is the server's name in known_hosts: "[127.0.0.1]:PORT".
func (s *Server) KnownHostsName() string {
	return knownhosts.Normalize(s.Addr)
}

// WriteKnownHosts writes a known_hosts file trusting the server's host keys
// whose types are among algos (all of them when algos is empty), hashing
// the host names when hashed is set.
func (s *Server) WriteKnownHosts(path string, hashed bool, algos ...string) error {
	var b strings.Builder
	for _, k := range s.HostKeys {
		if len(algos) > 0 && !contains(algos, k.Type()) {
			continue
		}
		name := s.KnownHostsName()
		if hashed {
			name = knownhosts.HashHostname(name)
		}
		b.WriteString(knownhosts.Line([]string{name}, k) + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WriteConfig writes an ssh_config to path with a Host entry named alias
// for the server: HostName, Port, User, IdentityFile, IdentitiesOnly yes,
// StrictHostKeyChecking yes and UserKnownHostsFile dir/known_hosts, where
// dir is path's directory. extra lines (e.g. "ProxyJump jump") are added to
// the entry before these, so they take precedence. It does not write the
// known_hosts file: see WriteKnownHosts.
func (s *Server) WriteConfig(path, alias string, extra ...string) error {
	return os.WriteFile(path, []byte(s.ConfigEntry(alias, filepath.Join(filepath.Dir(path), "known_hosts"), extra...)), 0o600)
}

// ConfigEntry returns the ssh_config Host entry WriteConfig writes, with
// the given known_hosts file; several entries can go into one file.
func (s *Server) ConfigEntry(alias, knownHosts string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Host %s\n", alias)
	for _, l := range extra {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n  UserKnownHostsFile %s\n",
		s.Port, s.User, s.ClientKeyPath, knownHosts)
	return b.String()
}

// Fingerprint returns the SHA256 fingerprint of the host key of type algo.
func (s *Server) Fingerprint(algo string) string {
	for _, k := range s.HostKeys {
		if k.Type() == algo {
			return gossh.FingerprintSHA256(k)
		}
	}
	return ""
}

// Authorize adds pub to the server's authorized_keys.
func (s *Server) Authorize(pub gossh.PublicKey) error {
	f, err := os.OpenFile(filepath.Join(s.Dir, "authorized_keys"), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(gossh.MarshalAuthorizedKey(pub)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
