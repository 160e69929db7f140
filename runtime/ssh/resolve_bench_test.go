package ssh

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkResolve measures resolving one host: with ssh -G, with ssh -G
// answered from the cache, and with the built-in parser.
func BenchmarkResolve(b *testing.B) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		b.Fatal("ssh client not installed (openssh-client)")
	}
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte("Host web1\n  HostName 10.1.2.3\n  Port 2222\n  ControlPath "+dir+"/cm-%r@%h:%p\n"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(cfg, old, old)
	for _, bb := range []struct {
		name string
		opts Options
	}{
		{"ssh-G", Options{ConfigFile: cfg, sshBinary: sshBin}},
		{"ssh-G-cached", Options{ConfigFile: cfg, sshBinary: sshBin, CacheDir: b.TempDir()}},
		{"parser", Options{ConfigFile: cfg, sshBinary: "-"}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := newResolver(bb.opts).resolve(context.Background(), "web1", true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
