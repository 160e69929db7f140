package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// Full is what only the bgjob-full binary links (package internal/full
// makes it): the transports to SSH hosts and containers, the MCP server
// and the terminal views of top and attach. The bgjob binary, which
// serves the verbs people and agents run in loops on this machine and
// through --via, leaves them out: their packages' initialisation and
// pages made every start of bgjob about twice a Go hello world's
// (docs/benchmarks.md, "Start of every verb"). For a request that needs
// one of them, bgjob runs bgjob-full, found beside it, with the same
// arguments, as git runs git-NAME (execFull); bgjob-full is the whole
// command line and can be run by itself.
type Full struct {
	// Dial returns a runtime of host (host.Dial, with o as its options)
	// and what releases it.
	Dial func(ctx context.Context, host string, o HostOptions) (bgjob.Runtime, func(), error)
	// Endpoint returns where an SSH host leads under o (user, host name,
	// port and proxies; equal for two names of one account), false for a
	// host that is not an SSH host.
	Endpoint func(ctx context.Context, host string, o HostOptions) (fmt.Stringer, bool, error)
	// ConfigHosts lists the host names of an ssh_config file ("" for the
	// user's), for completion.
	ConfigHosts func(file string) []string
	// ErrorKind is the --json kind of a transport's error ("host_key",
	// "unreachable"), "" for an error it does not know.
	ErrorKind func(err error) string
	// TransportError returns the error of an SSH host's or a
	// container's runtime that err is or wraps, the host it names and
	// the reason it gives after the host; false when there is none.
	TransportError func(err error) (e error, host, reason string, ok bool)
	// MCP serves the MCP tools on o.In and o.Out until the client goes.
	MCP func(ctx context.Context, o MCPOptions) error
	// Top shows the jobs of c in t until the user quits.
	Top func(ctx context.Context, c *bgjob.Client, t Terminal, o TopOptions) error
	// Attach attaches t to job until the detach key or the job's end
	// (ended, and the job as it ended).
	Attach func(ctx context.Context, c *bgjob.Client, job jobdir.Job, t Terminal, o AttachOptions) (ended bool, end jobdir.Job, err error)
}

// HostOptions are the command line's options of a host (host.Options).
type HostOptions struct {
	// Via is --via: the command that reaches every host but this machine.
	Via string
	// SSHConfig is the ssh_config file ("" for the user's).
	SSHConfig string
	// CacheDir holds the cache of "ssh -G" answers ("" for none).
	CacheDir string
	// Warn says a warning of the host's configuration.
	Warn func(msg string)
	// PromptIn and PromptOut, when PromptIn is not nil, are the terminal
	// a passphrase is asked for on; Share makes several hosts' prompts
	// ask once for each identity file.
	PromptIn  *os.File
	PromptOut io.Writer
	Share     func(ask func(keyFile string) ([]byte, error)) func(keyFile string) ([]byte, error)
}

// MCPOptions are what bgjob mcp serves with (mcp.Options).
type MCPOptions struct {
	Version, Host, Root, Workspace string
	AllowHosts                     []string
	MaxOutput                      int
	KeepJobs                       bool
	Reader                         string
	HostTimeout                    time.Duration
	Dial                           func(ctx context.Context, host string) (bgjob.Runtime, func(), error)
	Warn                           func(msg string)
	// In and Out carry the protocol.
	In  io.Reader
	Out io.Writer
}

// Terminal is the terminal top and attach take over (tui.Terminal).
type Terminal struct {
	In, Out   *os.File
	Stderr    io.Writer
	HostError func(error) error
}

// TopOptions are top's flags (tui.TopOptions).
type TopOptions struct {
	All, NoColor bool
	Interval     time.Duration
}

// AttachOptions are attach's flags (tui.AttachOptions).
type AttachOptions struct {
	DetachKey byte
	Stdin     bool
}

// Defaults of flags whose meaning lives in the full binary's packages;
// internal/full's tests check them against internal/mcp's and
// internal/tui's.
const (
	// DefaultMCPMaxOutput is mcp.DefaultMaxOutput.
	DefaultMCPMaxOutput = 32 << 10
	// DefaultTopInterval is tui.DefaultInterval.
	DefaultTopInterval = time.Second
)

// full is the Full of this binary: nil in bgjob, set by bgjob-full's main
// and by tests (SetFull).
var full *Full

// SetFull gives the command line what only bgjob-full links.
func SetFull(f *Full) { full = f }

// FullName is the file name of the full binary, beside bgjob.
const FullName = "bgjob-full"

// fullVersionEnv carries "PID VERSION" from bgjob to the bgjob-full it
// runs: the process bgjob-full is (bgjob's own pid, which an exec keeps;
// handerPID) and bgjob's version, which bgjob-full must share.
const fullVersionEnv = "BGJOB_FULL_FOR"

// handoverErr is why this process refuses the request bgjob handed it
// (checkHandover); setup returns it, so that --json says it too.
var handoverErr error

// checkHandover looks at the request bgjob handed this process, if it did,
// and keeps the variable from the jobs this process starts. bgjob-full
// refuses a bgjob of another version; a process that is not bgjob-full
// (full nil) refuses any: the file named bgjob-full beside bgjob is a
// bgjob, which would run itself again and again. A variable that names
// another process was inherited, not handed over: ignored.
func checkHandover() {
	v, set := os.LookupEnv(fullVersionEnv)
	if !set {
		return
	}
	os.Unsetenv(fullVersionEnv)
	pid, version, _ := strings.Cut(v, " ")
	if pid != strconv.Itoa(handerPID()) {
		return
	}
	// The file bgjob ran, as it named it (a link to it, perhaps).
	self := os.Args[0]
	switch {
	case full == nil:
		handoverErr = fmt.Errorf("%s is not bgjob-full but a bgjob: install both (go install github.com/bgjob/bgjob/cmd/...)", self)
	case version != versionText():
		handoverErr = fmt.Errorf("%s is %q, but the bgjob that ran it is %q: install both from one version (go install github.com/bgjob/bgjob/cmd/...)", self, versionText(), version)
	}
}

// errFullRan is returned by execFull where the process could not be
// replaced (Windows), after bgjob-full ran with its exit status.
type errFullRan struct{ code int }

func (e errFullRan) Error() string { return fmt.Sprintf("bgjob-full exited %d", e.code) }

// needFull runs bgjob-full with args for what, a request the bgjob
// binary cannot serve ("bgjob mcp", "host web1"), when this binary is not
// bgjob-full; it returns only on failure, or, where the process cannot
// be replaced, once bgjob-full has ended (errFullRan).
func needFull(what string, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%s needs %s, and this executable's path is unknown: %v", what, FullName, err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	path := filepath.Join(filepath.Dir(self), FullName+exeSuffix)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s needs %s beside %s, and there is none: install both (go install github.com/bgjob/bgjob/cmd/...)", what, path, self)
		}
		return fmt.Errorf("%s needs %s: %v", what, path, err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, fullVersionEnv+"=") })
	env = append(env, fmt.Sprintf("%s=%d %s", fullVersionEnv, os.Getpid(), versionText()))
	if err := execFile(path, args, env); !errors.As(err, new(errFullRan)) {
		return fmt.Errorf("%s needs %s: %w", what, path, err)
	}
	return err
}

// remoteHosts reports whether -H, as given, names a host other than this
// machine: a host file (read once, by whichever binary serves the
// request: a pipe cannot be read twice) or a name.
func remoteHosts(args []string) (string, bool) {
	for _, arg := range args {
		if strings.HasPrefix(arg, "@") {
			return arg, true
		}
		if h := hostNames(arg); len(h) > 0 {
			return h[0], true
		}
	}
	return "", false
}
