//go:build !windows

package sshtest

import (
	"errors"
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

// Fleet is a simulated fleet of hosts on this machine: each host is an
// OpenSSH sshd in its own pid, mount and UTS namespace (its own /proc, its
// own tmpfs on /tmp, hostname nI), listening on 127.0.2.I (hosts past
// the 254th on 127.0.3.1 and on: fleetIP). All hosts share
// one port, the host keys and the accepted client key. It needs root and
// util-linux unshare.
//
// A host's jobs live in its /tmp, so hosts never see each other's jobs;
// the test reads a host's files through Host.Root. Ending a host's sshd
// (pid 1 of its namespace) ends every process of that host.
type Fleet struct {
	// Dir holds the keys, each host's config and log, and the client's
	// ssh_config and known_hosts. It is not under /tmp, which each host
	// hides behind its own tmpfs.
	Dir string
	// Port is the TCP port every host listens on.
	Port int
	// User is the current user, the one the client key logs in as.
	User string
	// HostKeys are the hosts' public host keys: ed25519, then ECDSA.
	HostKeys []gossh.PublicKey
	// ClientKeyPath is the unencrypted ed25519 private key every host
	// accepts.
	ClientKeyPath string
	// Hosts are the hosts, n1 on 127.0.2.1 first.
	Hosts []*Host
}

// Host is one host of a Fleet.
type Host struct {
	// Name is the host's alias in the client config and its hostname: nI.
	Name string
	// IP is its address, 127.0.2.I for the first 254 (fleetIP).
	IP string

	fleet   *Fleet
	cfgPath string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd // unshare
	exited chan struct{}
	sshd   int // pid of sshd, pid 1 of the namespace
}

// FleetDir is where StartFleet makes its directories: not under /tmp.
const FleetDir = "/var/tmp"

// StartFleet starts a fleet of n hosts for the test and removes it when
// the test ends. It skips the test when not run as root or when sshd or
// unshare is missing, except under CI (CI set), where that is a failure:
// .ci/run runs as root and installs both.
func StartFleet(t testing.TB, n int) *Fleet {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (for unshare)")
	}
	if _, err := os.Stat(SSHD); err != nil {
		missing = append(missing, SSHD+" (openssh-server)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		missing = append(missing, "unshare (util-linux)")
	}
	if len(missing) > 0 {
		testneed.Missing(t, "sshtest: a fleet needs %s", strings.Join(missing, ", "))
	}
	dir, err := os.MkdirTemp(FleetDir, "bgjob-fleet-")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFleet(dir, n)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		os.RemoveAll(dir)
	})
	return f
}

// NewFleet creates keys and configs in dir, which must exist and must not
// be under /tmp, and starts n hosts (n ≤ MaxFleet). Call Close to end
// them.
func NewFleet(dir string, n int) (*Fleet, error) {
	if n < 1 || n > MaxFleet {
		return nil, fmt.Errorf("sshtest: a fleet has 1 to %d hosts, not %d", MaxFleet, n)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	if dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
		return nil, fmt.Errorf("sshtest: fleet directory %s is under /tmp, which every host hides", dir)
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("sshtest: current user: %w", err)
	}
	keys := &Server{Dir: dir, ClientKeyPath: filepath.Join(dir, "id_ed25519")}
	if err := keys.writeKeys(); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	f := &Fleet{Dir: dir, Port: port, User: u.Username, HostKeys: keys.HostKeys, ClientKeyPath: keys.ClientKeyPath}
	for i := 1; i <= n; i++ {
		name := "n" + strconv.Itoa(i)
		h := &Host{Name: name, IP: fleetIP(i), fleet: f,
			cfgPath: filepath.Join(dir, name+".sshd_config"), logPath: filepath.Join(dir, name+".log")}
		if err := os.WriteFile(h.cfgPath, []byte(f.sshdConfig(h.IP)), 0o600); err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		f.Hosts = append(f.Hosts, h)
	}
	if out, err := exec.Command(SSHD, "-t", "-f", f.Hosts[0].cfgPath).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sshtest: sshd -t: %v: %s", err, out)
	}
	// At most startAtOnce hosts starting at a time: a host is ready once
	// it answers a connection, and each connection is an sshd forked and
	// exec'd anew; a thousand of them polled at once on two cores did not
	// all answer within Start's 15 s.
	errs := make([]error, n)
	sem := make(chan struct{}, startAtOnce)
	var wg sync.WaitGroup
	for i, h := range f.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = h.Start()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// MaxFleet is the most hosts a Fleet has: four loopback /24s.
const MaxFleet = 4 * 254

// startAtOnce is how many hosts NewFleet starts at a time.
const startAtOnce = 64

// fleetIP is the address of the Ith host (from 1): 127.0.2.1 to
// 127.0.2.254, then 127.0.3.1 and on.
func fleetIP(i int) string {
	return "127.0." + strconv.Itoa(2+(i-1)/254) + "." + strconv.Itoa((i-1)%254+1)
}

func (f *Fleet) sshdConfig(ip string) string {
	lines := []string{
		"Port " + strconv.Itoa(f.Port),
		"ListenAddress " + ip,
		"HostKey " + filepath.Join(f.Dir, "ssh_host_ed25519_key"),
		"HostKey " + filepath.Join(f.Dir, "ssh_host_ecdsa_key"),
		"PidFile none",
		"AuthorizedKeysFile " + filepath.Join(f.Dir, "authorized_keys"),
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin prohibit-password",
		"MaxStartups 100:30:200",
		"LogLevel VERBOSE",
		// root's rc files on the CI machines run a slow pyenv init.
		"SetEnv SHLVL=1",
	}
	return strings.Join(lines, "\n") + "\n"
}

// hostScript runs inside the namespaces: it names the host, gives it its
// own /tmp and becomes its sshd. $1 is the name, $2 the config, $3 the log.
const hostScript = `hostname "$1" && mount -t tmpfs tmpfs /tmp && exec ` + SSHD + ` -D -f "$2" -E "$3"`

// Start starts the host (again, after Kill) and returns once it answers.
func (h *Host) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd != nil {
		return fmt.Errorf("sshtest: host %s is running", h.Name)
	}
	cmd := exec.Command("unshare", "--mount", "--pid", "--uts", "--fork", "--mount-proc", "--kill-child",
		"sh", "-c", hostScript, "sh", h.Name, h.cfgPath, h.logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshtest: host %s: starting unshare: %w", h.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	addr := h.Addr()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("sshtest: host %s exited at start (%v); log:\n%s", h.Name, cmd.ProcessState, tail(h.logPath))
		default:
		}
		if ready(addr) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshtest: host %s did not answer on %s within 15s; log:\n%s", h.Name, addr, tail(h.logPath))
		}
	}
	// unshare --fork has one child, the shell that became sshd.
	kids := childPIDs(cmd.Process.Pid)
	if len(kids) != 1 {
		cmd.Process.Kill()
		<-exited
		return fmt.Errorf("sshtest: host %s: unshare has %d children, want 1 (sshd)", h.Name, len(kids))
	}
	h.cmd, h.exited, h.sshd = cmd, exited, kids[0]
	return nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Addr is "127.0.2.I:PORT".
func (h *Host) Addr() string {
	return net.JoinHostPort(h.IP, strconv.Itoa(h.fleet.Port))
}

// Kill ends the host as a crash would: SIGKILL to its sshd, pid 1 of its
// namespace, which takes every process of the host with it. It returns
// once the host is gone.
func (h *Host) Kill() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd == nil {
		return nil
	}
	syscall.Kill(h.sshd, syscall.SIGKILL)
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		<-h.exited
	}
	h.cmd, h.sshd = nil, 0
	return nil
}

// Root is the host's root directory as seen from outside, /proc/PID/root:
// the host's /tmp is Root()+"/tmp". It is "" while the host is down.
func (h *Host) Root() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sshd == 0 {
		return ""
	}
	return "/proc/" + strconv.Itoa(h.sshd) + "/root"
}

// Procs returns the command lines of the host's live processes other than
// its listening sshd, by pid (zombies are not counted).
func (h *Host) Procs() map[int]string {
	h.mu.Lock()
	sshd := h.sshd
	h.mu.Unlock()
	procs := map[int]string{}
	if sshd == 0 {
		return procs
	}
	ns, err := os.Readlink("/proc/" + strconv.Itoa(sshd) + "/ns/pid")
	if err != nil {
		return procs
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sshd {
			continue
		}
		dir := "/proc/" + e.Name()
		if l, err := os.Readlink(dir + "/ns/pid"); err != nil || l != ns {
			continue
		}
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		procs[pid] = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return procs
}

// Close ends every host.
func (f *Fleet) Close() error {
	var wg sync.WaitGroup
	for _, h := range f.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Kill()
		}()
	}
	wg.Wait()
	return nil
}

// Names returns the hosts' names, n1 first.
func (f *Fleet) Names() []string {
	names := make([]string, len(f.Hosts))
	for i, h := range f.Hosts {
		names[i] = h.Name
	}
	return names
}

// WriteClientConfig writes an ssh_config, with one Host entry per host
// (its name, HostName its address) followed by extra lines and the
// settings every host shares, and a known_hosts file next to it trusting
// the hosts' keys. It returns the config's path.
func (f *Fleet) WriteClientConfig(dir string, extra ...string) (string, error) {
	kh := filepath.Join(dir, "known_hosts")
	var names []string
	var b strings.Builder
	for _, h := range f.Hosts {
		names = append(names, knownhosts.Normalize(h.Addr()))
		fmt.Fprintf(&b, "Host %s\n  HostName %s\n", h.Name, h.IP)
	}
	var khb strings.Builder
	for _, k := range f.HostKeys {
		khb.WriteString(knownhosts.Line(names, k) + "\n")
	}
	if err := os.WriteFile(kh, []byte(khb.String()), 0o600); err != nil {
		return "", err
	}
	b.WriteString("Host *\n")
	for _, l := range extra {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n  UserKnownHostsFile %s\n  BatchMode yes\n",
		f.Port, f.User, f.ClientKeyPath, kh)
	cfg := filepath.Join(dir, "ssh_config")
	return cfg, os.WriteFile(cfg, []byte(b.String()), 0o600)
}
