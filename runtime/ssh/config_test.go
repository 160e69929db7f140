package ssh

import (
	"context"
	"os"
	"os/exec"
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

// The fallback parser must agree with ssh -G on the settings bgjob uses.
func TestResolveMatchesOpenSSH(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("ssh client not installed: nothing to compare the fallback with")
	}
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
		want func(c *hostConfig)
	}{
		{host: "web1", want: func(c *hostConfig) {
			if c.hostname != "10.1.2.3" || c.port != "2222" || c.user != "deploy" {
				t.Errorf("address %s@%s:%s", c.user, c.hostname, c.port)
			}
			want := []string{home + "/.ssh/web_10.1.2.3_deploy_2222", dir + "/second"}
			if diff := cmp.Diff(want, c.identityFiles); diff != "" {
				t.Errorf("identityFiles (-want +got):\n%s", diff)
			}
			if c.controlPath != dir+"/cm-deploy@10.1.2.3:2222" {
				t.Errorf("controlPath %q", c.controlPath)
			}
			if c.connectTimeout != 7*time.Second || c.aliveInterval != 5*time.Second || c.aliveCountMax != 4 {
				t.Errorf("timeouts %v %v %d", c.connectTimeout, c.aliveInterval, c.aliveCountMax)
			}
		}},
		{host: "alice@web1:2300", want: func(c *hostConfig) {
			if c.user != "alice" || c.port != "2300" {
				t.Errorf("command-line user/port lost: %s %s", c.user, c.port)
			}
		}},
		{host: "db.internal", want: func(c *hostConfig) {
			if c.hostname != "db.internal.example.com" || c.strictHostKeyChecking != "no" {
				t.Errorf("hostname %q strict %q", c.hostname, c.strictHostKeyChecking)
			}
		}},
		{host: "plain", opts: []string{"UserKnownHostsFile=" + dir + "/override", "Port=2444"}, want: func(c *hostConfig) {
			if c.port != "2444" || len(c.userKnownHostsFiles) != 1 || c.userKnownHostsFiles[0] != dir+"/override" {
				t.Errorf("overrides lost: port %s known hosts %q", c.port, c.userKnownHostsFiles)
			}
			if c.aliveInterval != defaultAliveInterval || c.connectTimeout != defaultConnectTimeout {
				t.Errorf("defaults %v %v", c.aliveInterval, c.connectTimeout)
			}
		}},
		{host: "unknown", want: func(c *hostConfig) {
			if c.hostname != "unknown" || c.port != "22" || c.strictHostKeyChecking != "yes" {
				t.Errorf("defaults: %+v", c)
			}
			if len(c.identityFiles) == 0 || !strings.HasPrefix(c.identityFiles[0], home+"/.ssh/id_") {
				t.Errorf("default identity files %q", c.identityFiles)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			ctx := context.Background()
			viaSSH := &resolver{configFile: cfg, options: tt.opts, sshBinary: sshBin}
			fallback := &resolver{configFile: cfg, options: tt.opts}
			a, err := viaSSH.resolve(ctx, tt.host, true)
			if err != nil {
				t.Fatal(err)
			}
			b, err := fallback.resolve(ctx, tt.host, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, b, cmp.AllowUnexported(hostConfig{})); diff != "" {
				t.Errorf("ssh -G (-) and fallback (+) differ:\n%s", diff)
			}
			tt.want(a)
		})
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
