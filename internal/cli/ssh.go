package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/bgjob/bgjob/host"
	sshrt "github.com/bgjob/bgjob/runtime/ssh"
)

// hostOptions are the options of every host the command line reaches
// (through --via's command, when given): an
// SSH host's warnings are printed on stderr and its "ssh -G" answers
// cached in the user's cache directory; with prompt, a passphrase is
// asked for when stdin is a terminal (never while completing, nor under
// bgjob mcp, whose stdin is the protocol's).
func (a *app) hostOptions(prompt bool) host.Options {
	o := host.Options{Via: a.via}
	o.SSH = sshrt.Options{
		ConfigFile: a.sshConfig,
		Warn:       func(msg string) { fmt.Fprintf(a.stderr, "bgjob: warning: %s\n", msg) },
	}
	if dir, err := os.UserCacheDir(); err == nil {
		o.SSH.CacheDir = filepath.Join(dir, "bgjob")
	}
	if f, ok := a.stdin.(*os.File); prompt && ok && term.IsTerminal(int(f.Fd())) {
		o.SSH.Passphrase = a.prompts.wrap(sshrt.TerminalPassphrase(f, a.stderr))
	}
	return o
}
