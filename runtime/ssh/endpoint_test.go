package ssh

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Two names are the same host only when user, hostname, port and the way
// there are all equal, whichever source reads the config.
func TestResolveEndpoint(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config")
	os.WriteFile(cfg, []byte(`
Host a b
  HostName 10.0.0.1
  Port 2222
  User deploy
Host upper
  HostName 10.0.0.1
  Port 2222
  User deploy
Host otheruser
  HostName 10.0.0.1
  Port 2222
  User root
Host otherport
  HostName 10.0.0.1
  User deploy
Host jumped
  HostName 10.0.0.1
  Port 2222
  User deploy
  ProxyJump bastion
Host proxied
  HostName 10.0.0.1
  Port 2222
  User deploy
  ProxyCommand nc %h %p
`), 0o600)
	same := Endpoint{User: "deploy", HostName: "10.0.0.1", Port: "2222"}
	tests := []struct {
		host string
		want Endpoint
	}{
		{"a", same},
		{"b", same},
		{"deploy@10.0.0.1:2222", same},
		{"upper", same},
		{"otheruser", Endpoint{User: "root", HostName: "10.0.0.1", Port: "2222"}},
		{"otherport", Endpoint{User: "deploy", HostName: "10.0.0.1", Port: "22"}},
		{"jumped", Endpoint{User: "deploy", HostName: "10.0.0.1", Port: "2222", ProxyJump: "bastion"}},
		{"proxied", Endpoint{User: "deploy", HostName: "10.0.0.1", Port: "2222", ProxyCommand: "nc 10.0.0.1 2222"}},
		{"Web.Example", Endpoint{User: me.Username, HostName: "web.example", Port: "22"}},
	}
	for name, fallback := range map[string]bool{"ssh-G": false, "parser": true} {
		opts := Options{ConfigFile: cfg}
		if fallback {
			ForceFallback(&opts)
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.host, func(t *testing.T) {
				got, err := Resolve(context.Background(), tt.host, opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
	if got, want := same.String(), "deploy@10.0.0.1:2222"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestConfigHosts(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.MkdirAll(filepath.Join(dir, "conf.d"), 0o755)
	os.WriteFile(filepath.Join(dir, "conf.d", "b.conf"), []byte("Host from-b\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "conf.d", "a.conf"), []byte("host=from-a # a comment\nInclude "+cfg+"\n"), 0o600)
	os.WriteFile(cfg, []byte(`# hosts
Host web1 web2 *.internal !bad
  HostName 10.1.2.3
Host "quoted name" db?
Match host foo
  User x
Include `+filepath.Join(dir, "conf.d", "*.conf")+` `+filepath.Join(dir, "missing")+`
Host   web1   last
  # Host commented
`), 0o600)
	want := []string{"web1", "web2", "quoted name", "from-a", "from-b", "last"}
	if diff := cmp.Diff(want, ConfigHosts(cfg)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := ConfigHosts(filepath.Join(dir, "none")); len(got) != 0 {
		t.Errorf("a missing config names %q", got)
	}
}
