package ssh_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/runtime/ssh"
	"github.com/bgjob/bgjob/shellgen"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/bgjob/bgjob/internal/testneed"
)

// env is one test's sshd plus a private ssh config directory.
type env struct {
	srv *sshtest.Server
	dir string // holds config and known_hosts
	cfg string // ssh_config path
}

// newEnv starts sshd (with extra sshd_config lines), writes an ssh_config
// with Host "target" and a known_hosts trusting all server keys. The agent
// is disabled for hermetic tests.
func newEnv(t testing.TB, extra ...string) *env {
	t.Helper()
	t.Setenv("SSH_AUTH_SOCK", "")
	e := &env{srv: sshtest.Start(t, extra...), dir: t.TempDir()}
	e.cfg = filepath.Join(e.dir, "config")
	if err := e.srv.WriteConfig(e.cfg, "target"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.WriteKnownHosts(filepath.Join(e.dir, "known_hosts"), false); err != nil {
		t.Fatal(err)
	}
	return e
}

// writeConfig replaces the ssh_config with entries for target.
func (e *env) writeConfig(t testing.TB, entries ...string) {
	t.Helper()
	if err := os.WriteFile(e.cfg, []byte(strings.Join(entries, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *env) knownHosts() string { return filepath.Join(e.dir, "known_hosts") }

func dial(t *testing.T, host string, opts ssh.Options) *ssh.Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := ssh.Dial(ctx, host, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func exec1(t *testing.T, r *ssh.Runtime, script string, stdin io.Reader) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := r.Exec(ctx, script, stdin, &out); err != nil {
		t.Fatalf("Exec(%q): %v", script, err)
	}
	return out.String()
}

func TestExec(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	if r.Host() != "target" {
		t.Errorf("Host() = %q, want target", r.Host())
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var printfAll strings.Builder
	for i := range 256 {
		fmt.Fprintf(&printfAll, `\%03o`, i)
	}
	big := make([]byte, 1<<20)
	rand.Read(big)

	tests := []struct {
		name   string
		script string
		stdin  io.Reader
		want   string
	}{
		{"echo", "echo hello", nil, "hello\n"},
		{"quotes", `echo "it's" '$HOME' \"`, nil, "it's $HOME \"\n"},
		{"stderr not in stdout", "echo out; echo err >&2", nil, "out\n"},
		{"all bytes from printf", "printf '" + printfAll.String() + "'", nil, string(all)},
		{"all bytes through stdin", "cat", bytes.NewReader(all), string(all)},
		{"1MiB through stdin", "cat", bytes.NewReader(big), string(big)},
		{"nil stdin is empty", "cat; echo end", nil, "end\n"},
		{"multi-line script", "a=1\nb=2\necho $((a+b))", nil, "3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exec1(t, r, tt.script, tt.stdin); got != tt.want {
				if len(got) > 100 || len(tt.want) > 100 {
					t.Fatalf("stdout differs: got %d bytes, want %d", len(got), len(tt.want))
				}
				t.Fatalf("stdout = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExecNonZeroExit(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	var out bytes.Buffer
	err := r.Exec(context.Background(), "echo partial; echo first >&2; echo 'it broke' >&2; exit 3", nil, &out)
	var exit *ssh.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("err = %v (%T), want *ssh.ExitError", err, err)
	}
	if exit.ExitCode() != 3 || !strings.Contains(exit.Stderr, "it broke") {
		t.Errorf("ExitError = %+v, want status 3 and stderr with 'it broke'", exit)
	}
	for _, s := range []string{"target", "status 3", "it broke"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if out.String() != "partial\n" {
		t.Errorf("stdout = %q, want partial", out.String())
	}
	if err := r.Exec(context.Background(), "kill -TERM $$", nil, nil); !errors.As(err, &exit) || exit.Signal != "TERM" {
		t.Errorf("killed script: err = %v, want ExitError with signal TERM", err)
	}
}

// A stdout that fails ends the script instead of leaving it blocked on a
// full channel window.
func TestExecStdoutError(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := r.Exec(ctx, "yes", nil, failingWriter{})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Exec = %v (ctx %v), want the stdout error", err, ctx.Err())
	}
	exec1(t, r, "true", nil)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestUnknownHostRefused(t *testing.T) {
	e := newEnv(t)
	os.Remove(e.knownHosts())
	_, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
	if !errors.Is(err, ssh.ErrUnknownHost) {
		t.Fatalf("err = %v, want ErrUnknownHost", err)
	}
	// "ssh target" alone would not read the ssh_config bgjob was given.
	for _, s := range []string{"ssh -F " + e.cfg + " target", "accept-new", e.srv.KnownHostsName()} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if _, err := os.Stat(e.knownHosts()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("strict checking wrote known_hosts: %v", err)
	}
}

// The refusal of an unknown host quotes the key ssh would show: the one
// OpenSSH negotiates (its default order prefers ed25519 to ECDSA), which
// is the key "ssh -o StrictHostKeyChecking=accept-new" records. Before,
// it quoted the ECDSA key, x/crypto's first choice.
func TestUnknownHostKeyIsSSHs(t *testing.T) {
	e := newEnv(t)
	os.Remove(e.knownHosts())
	_, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
	if !errors.Is(err, ssh.ErrUnknownHost) {
		t.Fatalf("err = %v, want ErrUnknownHost", err)
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if out, err := exec.Command("ssh", "-F", e.cfg, "-o", "UserKnownHostsFile="+kh, "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes", "target", "true").CombinedOutput(); err != nil {
		t.Fatalf("ssh: %v: %s", err, out)
	}
	b, rerr := os.ReadFile(kh)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pub, _, _, _, perr := gossh.ParseAuthorizedKey([]byte(strings.Join(strings.Fields(string(b))[1:], " ")))
	if perr != nil {
		t.Fatalf("%s: %v", b, perr)
	}
	want := fmt.Sprintf("it presented %s %s", pub.Type(), gossh.FingerprintSHA256(pub))
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q, the key ssh recorded", err, want)
	}
}

// A host given as user@host:port: the command the refusal suggests is
// one ssh can run, with the port as -p PORT.
func TestUnknownHostPortRefused(t *testing.T) {
	e := newEnv(t)
	os.Remove(e.knownHosts())
	e.writeConfig(t, e.srv.ConfigEntry("127.0.0.1", e.knownHosts()))
	host := fmt.Sprintf("%s@127.0.0.1:%d", e.srv.User, e.srv.Port)
	_, err := ssh.Dial(context.Background(), host, ssh.Options{ConfigFile: e.cfg})
	if !errors.Is(err, ssh.ErrUnknownHost) {
		t.Fatalf("err = %v, want ErrUnknownHost", err)
	}
	want := fmt.Sprintf(`run "ssh -F %s -p %d %s@127.0.0.1" once`, e.cfg, e.srv.Port, e.srv.User)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestChangedHostKeyRefused(t *testing.T) {
	e := newEnv(t)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := gossh.NewPublicKey(pub)
	line := e.srv.KnownHostsName() + " " + string(gossh.MarshalAuthorizedKey(other))
	if err := os.WriteFile(e.knownHosts(), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
	if !errors.Is(err, ssh.ErrHostKeyChanged) {
		t.Fatalf("err = %v, want ErrHostKeyChanged", err)
	}
	for _, s := range []string{gossh.FingerprintSHA256(other), e.srv.Fingerprint("ssh-ed25519"), "ssh-keygen -R"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}

	// StrictHostKeyChecking no connects anyway, loudly.
	e.writeConfig(t, e.srv.ConfigEntry("target", e.knownHosts(), "StrictHostKeyChecking no"))
	warn := &warnings{}
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg, Warn: warn.add})
	exec1(t, r, "true", nil)
	if !strings.Contains(warn.String(), "CHANGED") {
		t.Errorf("no warning about the changed key: %q", warn.String())
	}
}

// The server offers ECDSA too, which x/crypto prefers; a known_hosts that
// holds only the (hashed) ed25519 key must still be accepted.
func TestHashedKnownHostsWithOnlyEd25519(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.WriteKnownHosts(e.knownHosts(), true, gossh.KeyAlgoED25519); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(e.knownHosts())
	if !bytes.HasPrefix(b, []byte("|1|")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("known_hosts is not one hashed line: %q", b)
	}
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	if got := exec1(t, r, "echo ok", nil); got != "ok\n" {
		t.Fatalf("got %q", got)
	}
}

func TestAcceptNew(t *testing.T) {
	tests := []struct {
		name   string
		extra  []string
		hashed bool
	}{
		{"plain", nil, false},
		{"HashKnownHosts", []string{"HashKnownHosts yes"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			kh := filepath.Join(e.dir, "new", "sub", "known_hosts")
			e.writeConfig(t,
				e.srv.ConfigEntry("new", kh, append([]string{"StrictHostKeyChecking accept-new"}, tt.extra...)...),
				e.srv.ConfigEntry("strict", kh))
			warn := &warnings{}
			r := dial(t, "new", ssh.Options{ConfigFile: e.cfg, Warn: warn.add})
			r.Close()
			b, err := os.ReadFile(kh)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.HasPrefix(b, []byte("|1|")); got != tt.hashed {
				t.Errorf("hashed = %v, want %v: %q", got, tt.hashed, b)
			}
			if !tt.hashed && !bytes.HasPrefix(b, []byte(e.srv.KnownHostsName()+" ")) {
				t.Errorf("known_hosts = %q, want an entry for %s", b, e.srv.KnownHostsName())
			}
			for path, want := range map[string]os.FileMode{kh: 0o600, filepath.Dir(kh): 0o700} {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
				}
			}
			if !strings.Contains(warn.String(), "permanently added") {
				t.Errorf("no warning through Warn: %q", warn.String())
			}
			for _, m := range warn.msgs {
				if strings.HasPrefix(m, "bgjob:") || strings.Contains(m, "\n") {
					t.Errorf("warning %q carries a prefix or a newline: the caller adds those", m)
				}
			}
			// The recorded key is now trusted by strict checking.
			r = dial(t, "strict", ssh.Options{ConfigFile: e.cfg})
			exec1(t, r, "true", nil)
			if after, _ := os.ReadFile(kh); !bytes.Equal(after, b) {
				t.Errorf("strict dial changed known_hosts")
			}
		})
	}
}

func TestUserAtHostPortWithoutConfig(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("fallback=%v", fallback), func(t *testing.T) {
			e := newEnv(t)
			opts := ssh.Options{
				ConfigFile: filepath.Join(e.dir, "does-not-exist"),
				ConfigOptions: []string{
					"IdentityFile=" + e.srv.ClientKeyPath,
					"UserKnownHostsFile=" + e.knownHosts(),
				},
			}
			if fallback {
				ssh.ForceFallback(&opts)
			}
			host := e.srv.User + "@" + e.srv.Addr
			r := dial(t, host, opts)
			if got := exec1(t, r, "id -un", nil); got != e.srv.User+"\n" {
				t.Errorf("remote user = %q, want %s", got, e.srv.User)
			}
			if r.Host() != host {
				t.Errorf("Host() = %q, want %q", r.Host(), host)
			}
		})
	}
}

func TestFallbackConfig(t *testing.T) {
	e := newEnv(t)
	opts := ssh.Options{ConfigFile: e.cfg}
	ssh.ForceFallback(&opts)
	r := dial(t, "target", opts)
	exec1(t, r, "true", nil)

	// An unsupported Match warns and goes on with defaults, which here
	// means the alias does not resolve.
	e.writeConfig(t, "Match user nobody\n  Port 1\n", e.srv.ConfigEntry("target", e.knownHosts()))
	warn := &warnings{}
	opts.Warn = warn.add
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r, err := ssh.Dial(ctx, "target", opts); err == nil {
		r.Close()
		t.Fatal("dial succeeded although the config could not be read")
	}
	if !strings.Contains(warn.String(), "Match") {
		t.Errorf("no warning about Match: %q", warn.String())
	}
}

func TestProxyJumpChain(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	j1, j2, target := sshtest.Start(t), sshtest.Start(t), sshtest.Start(t)
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	var khs []byte
	for _, s := range []*sshtest.Server{j1, j2, target} {
		p := filepath.Join(dir, "kh")
		s.WriteKnownHosts(p, false)
		b, _ := os.ReadFile(p)
		khs = append(khs, b...)
	}
	os.WriteFile(kh, khs, 0o600)
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(
		target.ConfigEntry("target", kh, "ProxyJump j1,j2")+
			j1.ConfigEntry("j1", kh)+
			j2.ConfigEntry("j2", kh)), 0o600)

	r := dial(t, "target", ssh.Options{ConfigFile: cfg})
	if got := exec1(t, r, "echo via", nil); got != "via\n" {
		t.Fatalf("got %q", got)
	}
	for name, s := range map[string]*sshtest.Server{"j1": j1, "j2": j2, "target": target} {
		if !strings.Contains(s.Log(), "Accepted publickey") {
			t.Errorf("%s: no login in sshd log", name)
		}
	}
	// Without the second jump host the target cannot be reached.
	j2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := ssh.Dial(ctx, "target", ssh.Options{ConfigFile: cfg})
	if err == nil || !strings.Contains(err.Error(), "jump host j2") {
		t.Fatalf("err = %v, want a failure at jump host j2", err)
	}
}

func TestUnreachable(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(fmt.Sprintf("Host web1\n  HostName 127.0.0.1\n  Port %d\n", port)), 0o600)
	_, err = ssh.Dial(context.Background(), "web1", ssh.Options{ConfigFile: cfg})
	want := fmt.Sprintf("web1: dial tcp 127.0.0.1:%d: connect: connection refused", port)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var se *ssh.Error
	if !errors.As(err, &se) || se.Host != "web1" {
		t.Fatalf("err = %#v, want an *ssh.Error of web1", err)
	}
}

// A server that accepts TCP but never speaks SSH fails after ConnectTimeout,
// which covers the handshake, not just the TCP connect.
func TestHandshakeTimeout(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(fmt.Sprintf("Host mute\n  HostName 127.0.0.1\n  Port %d\n  ConnectTimeout 1\n", l.Addr().(*net.TCPAddr).Port)), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = ssh.Dial(ctx, "mute", ssh.Options{ConfigFile: cfg})
	if err == nil || !strings.Contains(err.Error(), "no SSH handshake within 1s") {
		t.Fatalf("err = %v, want a handshake timeout", err)
	}
}

// 20 scripts at once over one connection to a server allowing 4 sessions:
// the session limit and the retry of refused channels get them all through.
func TestParallelExec(t *testing.T) {
	e := newEnv(t, "MaxSessions 4")
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	outs := make([]bytes.Buffer, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			errs[i] = r.Exec(ctx, fmt.Sprintf("sleep 0.3; echo %d", i), nil, &outs[i])
		}()
	}
	wg.Wait()
	for i := range 20 {
		if errs[i] != nil || outs[i].String() != fmt.Sprintf("%d\n", i) {
			t.Errorf("exec %d: %v, stdout %q", i, errs[i], outs[i].String())
		}
	}
}

// startMaster configures the host "target" with a ControlPath and starts
// an OpenSSH ControlMaster for it, ended when the test ends.
func (e *env) startMaster(t *testing.T) {
	t.Helper()
	sock := filepath.Join(e.dir, "cm.sock")
	e.writeConfig(t, e.srv.ConfigEntry("target", e.knownHosts(), "ControlPath "+sock))
	master := exec.Command("ssh", "-F", e.cfg, "-o", "BatchMode=yes", "-M", "-o", "ControlPersist=yes", "-fN", "target")
	if out, err := master.CombinedOutput(); err != nil {
		t.Fatalf("starting ControlMaster: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ssh", "-F", e.cfg, "-O", "exit", "target").Run() })
}

func TestControlMaster(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		testneed.Missing(t, "the ssh client (openssh-client)")
	}
	e := newEnv(t)
	e.startMaster(t)

	// With sshd no longer accepting connections, only the master's
	// connection can serve the Runtime.
	if err := e.srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	if !ssh.UsedControlMaster(r) {
		t.Error("Dial did not use the ControlMaster socket")
	}
	if got := exec1(t, r, "echo through master", nil); got != "through master\n" {
		t.Errorf("got %q", got)
	}

	// A stale socket path falls back to a normal connection.
	e.srv.Restart()
	e.writeConfig(t, e.srv.ConfigEntry("target", e.knownHosts(), "ControlPath "+filepath.Join(e.dir, "stale.sock")))
	os.WriteFile(filepath.Join(e.dir, "stale.sock"), nil, 0o600)
	r = dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	if ssh.UsedControlMaster(r) {
		t.Error("stale socket reported as used")
	}
	exec1(t, r, "true", nil)
}

func TestCancelEndsRemoteScript(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	marker := strconv.Itoa(100000 + int(time.Now().UnixNano()%800000))
	// The pattern scripts use: background work ended once stdin closes.
	script := "sleep " + marker + " & p=$!; echo started; cat >/dev/null; kill $p"
	stdin, stdinW := io.Pipe() // never closed by the test
	defer stdinW.Close()
	cancel := startExec(t, r, script, stdin)
	if out, _ := exec.Command("pgrep", "-f", "sleep "+marker).Output(); len(out) == 0 {
		t.Fatal("remote sleep not found before cancel")
	}
	cancel()
	for i := 0; ; i++ {
		out, _ := exec.Command("pgrep", "-f", "sleep "+marker).Output()
		if len(out) == 0 {
			break
		}
		if i == 100 {
			t.Fatalf("remote sleep still running after cancel: pids %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The connection still serves new scripts.
	exec1(t, r, "true", nil)
}

// A cancellation while stdin is still being copied to the script ends the
// copy cleanly: the end of stdin is never sent beside a write (the race
// detector flagged x/crypto's CloseWrite against a Write under way).
func TestCancelWhileCopyingStdin(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	for i := 0; i < 20; i++ {
		startExec(t, r, "echo started; cat >/dev/null", chunks{})()
	}
	exec1(t, r, "true", nil)
}

// chunks is an endless stdin read in small pieces: one write each.
type chunks struct{}

func (chunks) Read(p []byte) (int, error) {
	n := min(len(p), 512)
	for i := range p[:n] {
		p[i] = 'x'
	}
	return n, nil
}

// startExec runs script on r with stdin until it prints; the function it
// returns cancels the run and checks that Exec ends with context.Canceled.
func startExec(t *testing.T, r *ssh.Runtime, script string, stdin io.Reader) (cancel func()) {
	t.Helper()
	started := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	errc := make(chan error, 1)
	go func() { errc <- r.Exec(ctx, script, stdin, &signalWriter{c: started}) }()
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("Exec ended early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("script did not start")
	}
	return func() {
		t.Helper()
		stop()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Exec returned %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Exec did not return after cancel")
		}
	}
}

type signalWriter struct {
	c    chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.c) })
	return len(p), nil
}

// A link that silently stops carrying packets fails the running script once
// the keepalives go unanswered, instead of hanging.
func TestKeepaliveDetectsDeadLink(t *testing.T) {
	e := newEnv(t)
	p := startProxy(t, e.srv.Addr)
	// The proxy's port differs from sshd's: HostKeyAlias names the key.
	var kh []byte
	for _, k := range e.srv.HostKeys {
		kh = append(kh, "sshd-behind-proxy "+string(gossh.MarshalAuthorizedKey(k))...)
	}
	os.WriteFile(e.knownHosts(), kh, 0o600)
	e.writeConfig(t, fmt.Sprintf("Host viaproxy\n  HostName 127.0.0.1\n  Port %d\n  HostKeyAlias sshd-behind-proxy\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n", p.port)+
		e.srv.ConfigEntry("viaproxy", e.knownHosts()))
	r := dial(t, "viaproxy", ssh.Options{ConfigFile: e.cfg})
	exec1(t, r, "true", nil)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	started := make(chan struct{})
	errc := make(chan error, 1)
	stdin, stdinW := io.Pipe()
	defer stdinW.Close()
	// cat ends once sshd drops the connection: nothing is left behind.
	go func() { errc <- r.Exec(ctx, "echo started; cat", stdin, &signalWriter{c: started}) }()
	<-started
	p.freeze()
	err := <-errc
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "keepalive") {
		t.Fatalf("Exec = %v (ctx %v), want a keepalive failure", err, ctx.Err())
	}
}

// proxy forwards TCP to a server until frozen, then drops every byte while
// keeping the connections open: a dead link, as the client sees it.
type proxy struct {
	port   int
	mu     sync.Mutex
	frozen bool
}

func startProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{port: l.Addr().(*net.TCPAddr).Port}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *proxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		frozen := p.frozen
		p.mu.Unlock()
		if !frozen {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
	}
}

func TestAgentAndEncryptedKeys(t *testing.T) {
	e := newEnv(t)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	if err := e.srv.Authorize(signer.PublicKey()); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(e.dir, "id_locked")
	block, err := gossh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600)
	// IdentitiesOnly: a second agent key that the server would accept must
	// not be offered, so the agent holds the sshtest client key too.
	sock := startAgent(t, priv)

	locked := func(agentLine string) {
		e.writeConfig(t, fmt.Sprintf("Host target\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  %s\n",
			e.srv.Port, e.srv.User, keyPath, e.knownHosts(), agentLine))
	}

	t.Run("agent holds the encrypted key", func(t *testing.T) {
		locked("IdentityAgent " + sock)
		r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
		exec1(t, r, "true", nil)
	})
	t.Run("no agent, no prompt", func(t *testing.T) {
		locked("IdentityAgent none")
		_, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
		if err == nil || !strings.Contains(err.Error(), keyPath+" needs a passphrase") {
			t.Fatalf("err = %v, want it to name the key needing a passphrase", err)
		}
	})
	t.Run("no agent, prompt", func(t *testing.T) {
		locked("IdentityAgent none")
		var asked []string
		pass := func(k string) ([]byte, error) { asked = append(asked, k); return []byte("secret"), nil }
		r := dial(t, "target", ssh.Options{ConfigFile: e.cfg, Passphrase: pass})
		exec1(t, r, "true", nil)
		if len(asked) != 1 || asked[0] != keyPath {
			t.Errorf("asked for %q, want [%s]", asked, keyPath)
		}
	})
	t.Run("IdentitiesOnly filters agent keys", func(t *testing.T) {
		// Only the sshtest client key (in the agent) is authorized here.
		other := startAgentKeyFile(t, e.srv.ClientKeyPath)
		locked("IdentityAgent " + other)
		if r, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg}); err == nil {
			r.Close()
			// The server accepts the sshtest key too, so success means the
			// agent offered a key the config did not name.
			t.Fatal("dial succeeded with an agent key not named by IdentityFile")
		}
		e.writeConfig(t, fmt.Sprintf("Host target\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly no\n  UserKnownHostsFile %s\n  IdentityAgent %s\n",
			e.srv.Port, e.srv.User, filepath.Join(e.dir, "nonexistent"), e.knownHosts(), other))
		r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
		exec1(t, r, "true", nil)
	})
}

// startAgent serves an in-process ssh-agent holding keys on a socket.
func startAgent(t *testing.T, keys ...any) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				agent.ServeAgent(kr, c)
			}()
		}
	}()
	return sock
}

func startAgentKeyFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.ParseRawPrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return startAgent(t, k)
}

func TestCertificate(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	caDir := t.TempDir()
	_, caPriv, _ := ed25519.GenerateKey(rand.Reader)
	ca, _ := gossh.NewSignerFromKey(caPriv)
	caPub := filepath.Join(caDir, "ca.pub")
	os.WriteFile(caPub, gossh.MarshalAuthorizedKey(ca.PublicKey()), 0o644)
	srv := sshtest.Start(t, "TrustedUserCAKeys "+caPub)

	// A key the server knows only through its certificate.
	dir := t.TempDir()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	cert := &gossh.Certificate{
		Key: signer.PublicKey(), CertType: gossh.UserCert, KeyId: "test",
		ValidPrincipals: []string{srv.User}, ValidBefore: gossh.CertTimeInfinity,
		Permissions: gossh.Permissions{Extensions: map[string]string{"permit-pty": ""}},
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_cert")
	block, _ := gossh.MarshalPrivateKey(priv, "")
	os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600)
	kh := filepath.Join(dir, "known_hosts")
	srv.WriteKnownHosts(kh, false)
	cfg := filepath.Join(dir, "config")
	entry := fmt.Sprintf("Host target\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  UserKnownHostsFile %s\n", srv.Port, srv.User, keyPath, kh)

	os.WriteFile(cfg, []byte(entry), 0o600)
	if r, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: cfg}); err == nil {
		r.Close()
		t.Fatal("dial without the certificate succeeded")
	}
	for _, layout := range []string{"next to key", "CertificateFile"} {
		t.Run(layout, func(t *testing.T) {
			certPath := keyPath + "-cert.pub"
			conf := entry
			if layout == "CertificateFile" {
				certPath = filepath.Join(dir, "elsewhere.pub")
				conf += "  CertificateFile " + certPath + "\n"
			}
			os.WriteFile(certPath, gossh.MarshalAuthorizedKey(cert), 0o644)
			defer os.Remove(certPath)
			os.WriteFile(cfg, []byte(conf), 0o600)
			r := dial(t, "target", ssh.Options{ConfigFile: cfg})
			exec1(t, r, "true", nil)
		})
	}
}

// warnings collects what a Runtime reports through Options.Warn.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(msg string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, msg)
	w.mu.Unlock()
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, "\n")
}

func TestDoneAfterDrop(t *testing.T) {
	e := newEnv(t)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	exec1(t, r, "true", nil)
	select {
	case <-r.Done():
		t.Fatal("Done closed on a live connection")
	default:
	}
	if n := e.srv.DropConnections(); n == 0 {
		t.Fatal("DropConnections killed no sshd process")
	}
	<-r.Done()
}

// TestScriptThatNeverBegins: a login shell whose startup reads its input
// (here a ForceCommand that reads a line before it runs the command, as a
// .bashrc that asks a question does) waits for ever on the stdin bgjob
// keeps open. A script of bgjob's (one that prints the begin marker) that
// has not begun within the patience fails, saying why; it waited for ever
// (logs -f hung 43 minutes).
func TestScriptThatNeverBegins(t *testing.T) {
	e := newEnv(t, `ForceCommand read line; eval "$SSH_ORIGINAL_COMMAND"`)
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	ssh.SetStartPatience(r, 2*time.Second)
	open, _ := io.Pipe() // never written, never closed: as bgjob's watch
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := r.Exec(ctx, "printf '\\n%s\\n' '"+shellgen.BeginMarker+"'; echo ran", open, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "startup file") {
		t.Errorf("Exec through a login shell that reads its input: %v, want an error that says the script did not start", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Exec took %s, want about the 2 s patience", took)
	}
	// Given a line, the same shell runs the script, which begins in time
	// (the usual patience: a loaded machine can take more than two
	// seconds to start a session's shell).
	ssh.SetStartPatience(r, 30*time.Second)
	var out bytes.Buffer
	if err := r.Exec(ctx, "printf '\\n%s\\n' '"+shellgen.BeginMarker+"'; echo ran", strings.NewReader("answer\n"), &out); err != nil || !strings.HasSuffix(out.String(), "ran\n") {
		t.Errorf("Exec with a line for the startup: %v, %q", err, out.String())
	}
}

// TestScriptThatNeverBeginsNorEnds: a session whose command never runs the
// script and outlives the closed session (a ForceCommand sleep; sshd keeps
// the channel until its command exits) fails at the patience too, saying
// why: Exec waited for the command's end, for ever without a deadline.
func TestScriptThatNeverBeginsNorEnds(t *testing.T) {
	e := newEnv(t, "ForceCommand sleep 600")
	r := dial(t, "target", ssh.Options{ConfigFile: e.cfg})
	ssh.SetStartPatience(r, 2*time.Second)
	open, _ := io.Pipe() // never written, never closed: as bgjob's watch
	// Only a guard: the patience must end Exec first.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := r.Exec(ctx, "printf '\\n%s\\n' '"+shellgen.BeginMarker+"'; echo ran", open, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("Exec through a session that never runs the script: %v, want an error that says the script did not start", err)
	}
}
