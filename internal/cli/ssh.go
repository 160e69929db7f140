package cli

import (
	"context"
	"os"

	"golang.org/x/term"

	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// dialSSH connects to host. A passphrase is asked for only when stdin is a
// terminal.
func (a *app) dialSSH(ctx context.Context, host string) (*sshrt.Runtime, error) {
	opts := sshrt.Options{ConfigFile: a.sshConfig, Stderr: a.stderr}
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Passphrase = a.prompts.wrap(sshrt.TerminalPassphrase(f, a.stderr))
	}
	return sshrt.Dial(ctx, host, opts)
}
