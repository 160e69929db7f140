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
			if c.connectTimeout != 15*time.Second || c.aliveInterval != 15*time.Second || c.aliveCountMax != 3 {
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
			if diff := cmp.Diff(got["ssh-G"], got["parser"], cmp.AllowUnexported(hostConfig{})); diff != "" {
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
