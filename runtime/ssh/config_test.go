package ssh

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    spec
		wantErr bool
	}{
		{in: "web1", want: spec{host: "web1"}},
		{in: "bob@web1", want: spec{user: "bob", host: "web1"}},
		{in: "bob@web1:2222", want: spec{user: "bob", host: "web1", port: "2222"}},
		{in: "127.0.0.1:22", want: spec{host: "127.0.0.1", port: "22"}},
		{in: "[::1]:2200", want: spec{host: "::1", port: "2200"}},
		{in: "[::1]", want: spec{host: "::1"}},
		{in: "ssh://me@h:23", want: spec{user: "me", host: "h", port: "23"}},
		{in: "a@b@h", want: spec{user: "a@b", host: "h"}},
		{in: "", wantErr: true},
		{in: "-oProxyCommand=x", wantErr: true},
		{in: "h:0", wantErr: true},
		{in: "h:http", wantErr: true},
		{in: "a b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSpec(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// sources returns the two config sources for configFile: ssh -G, and the
// built-in parser behind it.
func sources(t *testing.T, configFile string) map[string]*resolver {
	t.Helper()
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatal("ssh client not installed (openssh-client): ssh -G cannot be checked")
	}
	viaSSH := newResolver(Options{ConfigFile: configFile, sshBinary: sshBin})
	if viaSSH.sshG == nil {
		t.Fatal("resolver has no ssh -G source")
	}
	fallback := newResolver(Options{ConfigFile: configFile, sshBinary: "-"})
	if fallback.sshG != nil {
		t.Fatal("fallback resolver asks ssh")
	}
	return map[string]*resolver{"ssh-G": viaSSH, "parser": fallback}
}

// Both config sources, ssh -G and the fallback parser, must meet the same
// expectations, and agree with each other on every setting bgjob uses.
func TestResolve(t *testing.T) {
	home := homeDir()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(`
Host web1
  HostName 10.1.2.3
  Port 2222
  User deploy
  IdentityFile ~/.ssh/web_%h_%r_%p
  IdentityFile `+dir+`/second
  CertificateFile ~/.ssh/web-cert.pub
  IdentitiesOnly yes
  IdentityAgent none
  ProxyJump jump1,bob@jump2:2200
  StrictHostKeyChecking accept-new
  UserKnownHostsFile `+dir+`/kh1 ~/kh2
  HashKnownHosts yes
  HostKeyAlias web1-key
  ConnectTimeout 7
  ServerAliveInterval 5
  ServerAliveCountMax 4
  ControlPath `+dir+`/cm-%r@%h:%p

Host *.internal
  HostName %h.example.com
  StrictHostKeyChecking no

Host plain
  StrictHostKeyChecking yes
`), 0o600)
	tests := []struct {
		host string
		opts []string
		want func(t *testing.T, c *hostConfig)
	}{
		{host: "web1", want: func(t *testing.T, c *hostConfig) {
			if c.hostname != "10.1.2.3" || c.port != "2222" || c.user != "deploy" {
				t.Errorf("address %s@%s:%s", c.user, c.hostname, c.port)
			}
			want := []string{home + "/.ssh/web_10.1.2.3_deploy_2222", dir + "/second"}
			if diff := cmp.Diff(want, c.identityFiles); diff != "" {
				t.Errorf("identityFiles (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{dir + "/kh1", home + "/kh2"}, c.userKnownHostsFiles); diff != "" {
				t.Errorf("userKnownHostsFiles (-want +got):\n%s", diff)
			}
			if c.controlPath != dir+"/cm-deploy@10.1.2.3:2222" {
				t.Errorf("controlPath %q", c.controlPath)
			}
			if c.connectTimeout != 7*time.Second || c.aliveInterval != 5*time.Second || c.aliveCountMax != 4 {
				t.Errorf("timeouts %v %v %d", c.connectTimeout, c.aliveInterval, c.aliveCountMax)
			}
			if c.proxyJump != "jump1,bob@jump2:2200" || c.identityAgent != "none" || !c.identitiesOnly || !c.hashKnownHosts ||
				c.hostKeyAlias != "web1-key" || c.strictHostKeyChecking != "accept-new" {
				t.Errorf("settings lost: %+v", c)
			}
		}},
		{host: "alice@web1:2300", want: func(t *testing.T, c *hostConfig) {
			if c.user != "alice" || c.port != "2300" {
				t.Errorf("command-line user/port lost: %s %s", c.user, c.port)
			}
		}},
		{host: "db.internal", want: func(t *testing.T, c *hostConfig) {
			if c.hostname != "db.internal.example.com" || c.strictHostKeyChecking != "no" {
				t.Errorf("hostname %q strict %q", c.hostname, c.strictHostKeyChecking)
			}
		}},
		{host: "plain", opts: []string{"UserKnownHostsFile=" + dir + "/override", "Port=2444"}, want: func(t *testing.T, c *hostConfig) {
			if c.port != "2444" || len(c.userKnownHostsFiles) != 1 || c.userKnownHostsFiles[0] != dir+"/override" {
				t.Errorf("overrides lost: port %s known hosts %q", c.port, c.userKnownHostsFiles)
			}
		}},
		{host: "unknown", want: func(t *testing.T, c *hostConfig) {
			// Every default, applied once by withDefaults.
			if c.hostname != "unknown" || c.port != "22" || c.strictHostKeyChecking != "yes" {
				t.Errorf("defaults: %+v", c)
			}
			if u, _ := user.Current(); c.user != u.Username {
				t.Errorf("user %q, want the current user", c.user)
			}
			if len(c.identityFiles) == 0 || !strings.HasPrefix(c.identityFiles[0], home+"/.ssh/id_") {
				t.Errorf("default identity files %q", c.identityFiles)
			}
			if diff := cmp.Diff([]string{home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"}, c.userKnownHostsFiles); diff != "" {
				t.Errorf("default userKnownHostsFiles (-want +got):\n%s", diff)
			}
			if c.connectTimeout != 10*time.Second || c.aliveInterval != 15*time.Second || c.aliveCountMax != 3 {
				t.Errorf("default timeouts %v %v %d", c.connectTimeout, c.aliveInterval, c.aliveCountMax)
			}
			if c.controlPath != "" || c.proxyJump != "" || c.proxyCommand != "" {
				t.Errorf("unset settings are set: %+v", c)
			}
		}},
	}
	srcs := sources(t, cfg)
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got := map[string]*hostConfig{}
			for name, r := range srcs {
				r.options = tt.opts
				c, err := r.resolve(context.Background(), tt.host, true)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got[name] = c
				t.Run(name, func(t *testing.T) { tt.want(t, c) })
			}
			if diff := cmp.Diff(got["ssh-G"], got["parser"], cmp.AllowUnexported(hostConfig{}, spec{})); diff != "" {
				t.Errorf("ssh -G (-) and the parser (+) differ:\n%s", diff)
			}
		})
	}
}

// When ssh -G fails, the resolver warns and answers with the parser.
func TestResolveFallsBackWhenSSHFails(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte("Host web1\n  HostName 10.9.9.9\n  Port 2022\n"), 0o600)
	failing := filepath.Join(dir, "ssh")
	os.WriteFile(failing, []byte("#!/bin/sh\necho 'ssh: broken' >&2\nexit 255\n"), 0o755)
	var warned []string
	r := newResolver(Options{ConfigFile: cfg, sshBinary: failing, Warn: func(m string) { warned = append(warned, m) }})
	c, err := r.resolve(context.Background(), "web1", true)
	if err != nil {
		t.Fatal(err)
	}
	if c.hostname != "10.9.9.9" || c.port != "2022" {
		t.Errorf("fallback answer %s:%s, want 10.9.9.9:2022", c.hostname, c.port)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "ssh: broken") || !strings.Contains(warned[0], "parser") {
		t.Errorf("warnings %q, want one naming ssh's error and the fallback", warned)
	}
}

// countingSSH writes a wrapper around the real ssh that counts its runs.
func countingSSH(t *testing.T) (bin string, runs func() int) {
	t.Helper()
	real, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatal("ssh client not installed (openssh-client)")
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	bin = filepath.Join(dir, "ssh")
	os.WriteFile(bin, []byte("#!/bin/sh\necho >>"+count+"\nexec "+real+" \"$@\"\n"), 0o755)
	backdate(t, bin) // the binary is part of the answer, like the config files
	return bin, func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "\n")
	}
}

// backdate sets a file's mtime an hour back, out of the cache's racy window.
func backdate(t *testing.T, paths ...string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		old = old.Add(time.Second)
	}
}

// The ssh -G cache answers repeated questions without running ssh, and
// asks ssh again after any change the answer depends on.
func TestConfigCache(t *testing.T) {
	dir := t.TempDir()
	incDir := filepath.Join(dir, "conf.d")
	os.Mkdir(incDir, 0o700)
	cfg := filepath.Join(dir, "config")
	inc := filepath.Join(dir, "extra.conf")
	os.WriteFile(inc, []byte("Host web1\n  User fromextra\n"), 0o600)
	write := func(body string) {
		os.WriteFile(cfg, []byte("Include "+incDir+"/*.conf "+inc+"\n"+body), 0o600)
		backdate(t, cfg)
	}
	write("Host web1\n  HostName 10.0.0.1\n  ControlPath ${BGJOB_TEST_CM}/%h\n")
	backdate(t, inc, incDir)
	t.Setenv("BGJOB_TEST_CM", "/run/a")
	bin, runs := countingSSH(t)
	cache := t.TempDir()
	resolve := func() *hostConfig {
		t.Helper()
		r := newResolver(Options{ConfigFile: cfg, sshBinary: bin, CacheDir: cache})
		c, err := r.resolve(context.Background(), "web1", true)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(step string, wantRuns int, want func(c *hostConfig) bool) {
		t.Helper()
		c := resolve()
		if n := runs(); n != wantRuns {
			t.Errorf("%s: ssh ran %d times in all, want %d", step, n, wantRuns)
		}
		if !want(c) {
			t.Errorf("%s: stale answer %+v", step, c)
		}
	}
	check("first", 1, func(c *hostConfig) bool { return c.hostname == "10.0.0.1" && c.user == "fromextra" })
	check("cached", 1, func(c *hostConfig) bool { return c.hostname == "10.0.0.1" && c.controlPath == "/run/a/10.0.0.1" })
	if files, _ := filepath.Glob(filepath.Join(cache, "ssh-config", "*.json")); len(files) != 1 {
		t.Errorf("cache holds %q, want one entry", files)
	}

	write("Host web1\n  HostName 10.0.0.2\n  ControlPath ${BGJOB_TEST_CM}/%h\n")
	check("config changed", 2, func(c *hostConfig) bool { return c.hostname == "10.0.0.2" })
	check("cached again", 2, func(c *hostConfig) bool { return c.hostname == "10.0.0.2" })

	os.WriteFile(inc, []byte("Host web1\n  User other\n"), 0o600)
	backdate(t, inc)
	check("included file changed", 3, func(c *hostConfig) bool { return c.user == "other" })

	os.WriteFile(filepath.Join(incDir, "a.conf"), []byte("Host web1\n  Port 2201\n"), 0o600)
	backdate(t, filepath.Join(incDir, "a.conf"), incDir)
	check("file added to an Include glob", 4, func(c *hostConfig) bool { return c.port == "2201" })

	t.Setenv("BGJOB_TEST_CM", "/run/b")
	check("referenced environment changed", 5, func(c *hostConfig) bool { return c.controlPath == "/run/b/10.0.0.2" })

	// A config modified just now may have changed while ssh read it: the
	// answer is used but not kept.
	os.WriteFile(cfg, []byte("Host web1\n  HostName 10.0.0.3\n"), 0o600)
	check("racy", 6, func(c *hostConfig) bool { return c.hostname == "10.0.0.3" })
	check("racy, not kept", 7, func(c *hostConfig) bool { return c.hostname == "10.0.0.3" })

	// Match exec can answer differently each time: never kept.
	write("Match exec true\n  HostName 10.0.0.4\n")
	check("match exec", 8, func(c *hostConfig) bool { return c.hostname == "10.0.0.4" })
	check("match exec, not kept", 9, func(c *hostConfig) bool { return c.hostname == "10.0.0.4" })
}

func TestExpandTokens(t *testing.T) {
	t.Setenv("BGJOB_TEST_SOCK", "/run/agent")
	tk := newTokens("alias", "host.example", "2022", "bob")
	home := homeDir()
	tests := map[string]string{
		"~/.ssh/id_%h":          home + "/.ssh/id_host.example",
		"%d/x/%r@%h:%p-%n":      home + "/x/bob@host.example:2022-alias",
		"100%%":                 "100%",
		"${BGJOB_TEST_SOCK}/%r": "/run/agent/bob",
		"/plain/path":           "/plain/path",
	}
	for in, want := range tests {
		if got := tk.expand(in); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
