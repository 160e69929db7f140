package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/host/near"
)

// hostOptions are the options of every host the command line reaches
// (through --via's command, when given): an
// SSH host's warnings are printed on stderr and its "ssh -G" answers
// cached in the user's cache directory; with prompt, a passphrase is
// asked for when stdin is a terminal (never while completing, nor under
// bgjob mcp, whose stdin is the protocol's).
func (a *app) hostOptions(prompt bool) HostOptions {
	o := HostOptions{
		Via:       a.via,
		SSHConfig: a.sshConfig,
		Warn:      func(msg string) { fmt.Fprintf(a.stderr, "bgjob: warning: %s\n", msg) },
		Share:     a.prompts.wrap,
	}
	if dir, err := os.UserCacheDir(); err == nil {
		o.CacheDir = filepath.Join(dir, "bgjob")
	}
	if f, ok := a.stdin.(*os.File); prompt && ok && term.IsTerminal(int(f.Fd())) {
		o.PromptIn, o.PromptOut = f, a.stderr
	}
	return o
}

// dial returns a runtime of host h and what releases it, with prompts
// when prompt is true (hostOptions). bgjob-full reaches every host
// through host.Dial; bgjob itself reaches this machine and --via hosts,
// the transports it links, and setup has run bgjob-full for any other.
func (a *app) dial(ctx context.Context, h string, prompt bool) (bgjob.Runtime, func(), error) {
	if full != nil {
		return full.Dial(ctx, h, a.hostOptions(prompt))
	}
	if rt, release, ok, err := near.Dial(h, a.via); ok {
		return rt, release, err
	}
	return nil, nil, needFull("host "+h, a.args)
}

// client returns a client of host h in the command line's root and
// workspace, made with opts, and what releases it.
func (a *app) client(ctx context.Context, h string, prompt bool, opts ...bgjob.ClientOption) (*bgjob.Client, func(), error) {
	rt, release, err := a.dial(ctx, h, prompt)
	if err != nil {
		return nil, nil, err
	}
	c, err := bgjob.NewClient(rt, a.root, a.workspace, opts...)
	if err != nil {
		release()
		return nil, nil, err
	}
	return c, release, nil
}
