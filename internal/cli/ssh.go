package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/term"

	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// dialSSH connects to host. The runtime's warnings are printed on stderr;
// "ssh -G" answers are cached in the user's cache directory; a passphrase
// is asked for only when stdin is a terminal.
func (a *app) dialSSH(ctx context.Context, host string) (*sshrt.Runtime, error) {
	opts := a.sshOptions()
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Passphrase = a.prompts.wrap(sshrt.TerminalPassphrase(f, a.stderr))
	}
	return sshrt.Dial(ctx, host, opts)
}

// sshOptions are the options of every SSH connection, without a
// passphrase prompt.
func (a *app) sshOptions() sshrt.Options {
	opts := sshrt.Options{
		ConfigFile: a.sshConfig,
		Warn:       func(msg string) { fmt.Fprintf(a.stderr, "bgjob: warning: %s\n", msg) },
	}
	if dir, err := os.UserCacheDir(); err == nil {
		opts.CacheDir = filepath.Join(dir, "bgjob")
	}
	return opts
}
