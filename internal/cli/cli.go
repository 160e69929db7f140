// Package cli is bgjob's command line: one cobra command per verb, each
// turning flags into a library call on a bgjob.Client and printing the
// result.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/via"
)

// app holds what every command shares: the global flags and the streams.
type app struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	root           string
	workspace      string
	// host is the one SSH host ("" for this machine); with several,
	// hosts holds them all, each distinct host once, and host is "".
	host      string
	hosts     []string
	fanout    bool // several hosts were named
	hostArgs  []string
	parallel  int
	noPrefix  bool
	prompts   *sharedPrompt
	sshConfig string
	via       string
	json      bool
	// args are the command line's arguments, for bgjob-full (needFull).
	args []string
	// terminal reports whether w is a terminal (isTerminal; tests replace it).
	terminal func(io.Writer) bool
	// hostTimeout bounds each host's part of a verb that does not wait
	// (0: no bound).
	hostTimeout time.Duration
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// usageError marks an error in how bgjob was called (exit status 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// Main runs bgjob with the process's arguments and returns its exit status.
// It first looks at the request bgjob may have handed this process
// (checkHandover).
func Main() int {
	checkHandover()
	sealDescriptors()
	// bgjob is a short-lived command: have the collector keep the heap
	// small rather than let it grow with a 10,000-job listing.
	debug.SetMemoryLimit(20 << 20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs bgjob with args and returns its exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	stdout = out
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, terminal: isTerminal, args: args}
	cmd := a.rootCommand(verbOf(args))
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	failed, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		if err = out.failed(); err == nil {
			return 0
		}
		err = fmt.Errorf("writing output: %w", err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		// Interrupted (Ctrl-C or TERM): the jobs go on; say nothing more.
		// Whatever failed after the interrupt (a session cut under a
		// follow) failed because of it: the interrupt is the answer.
		return 130
	}
	if errors.Is(err, syscall.EPIPE) {
		// The reader of stdout went (logs --new | head -c 100): quiet,
		// with the status of a command SIGPIPE ended.
		return 128 + 13
	}
	var ran errFullRan
	if errors.As(err, &ran) {
		return ran.code
	}
	var ee *exitError
	code := 1
	switch {
	case errors.As(err, &ee):
		code = ee.code
		if ee.err == nil {
			return code
		}
	case errors.Is(err, bgjob.ErrUsage):
		code = 2
	case isCobraUsage(err):
		code = 2
	}
	if a.json {
		printErrorJSON(stdout, err)
	}
	var said []string
	for _, e := range joined(err) {
		// The same error twice (a host that failed both of prune's
		// passes) is said once.
		if msg := e.Error(); !slices.Contains(said, msg) {
			said = append(said, msg)
			fmt.Fprintf(stderr, "bgjob: error: %s\n", msg)
		}
	}
	if failed != nil {
		if h := a.elsewhere(ctx, err, failed.Name()); h != "" {
			fmt.Fprintf(stderr, "bgjob: hint: %s\n", h)
		}
	}
	if code == 2 {
		fmt.Fprintf(stderr, "bgjob: hint: %s\n", helpHint(failed))
	}
	return code
}

// Command returns bgjob's root command, for generating documentation.
func Command() *cobra.Command {
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, terminal: isTerminal}
	return a.rootCommand("")
}

// verbs make the command of each verb.
var verbs = []struct {
	name string
	make func(*app) *cobra.Command
}{
	{"run", (*app).runCommand}, {"status", (*app).statusCommand}, {"ls", (*app).listCommand}, {"logs", (*app).logsCommand},
	{"wait", (*app).waitCommand}, {"events", (*app).eventsCommand}, {"stop", (*app).stopCommand}, {"rm", (*app).rmCommand},
	{"prune", (*app).pruneCommand}, {"send", (*app).sendCommand}, {"attach", (*app).attachCommand}, {"top", (*app).topCommand},
	{"version", (*app).versionCommand}, {"mcp", (*app).mcpCommand},
}

// globalValueFlags are the root's flags that take a value, as the words
// that may stand before a verb.
var globalValueFlags = []string{"-w", "--workspace", "--root", "-H", "--host", "--parallel", "--ssh-config", "--via", "--host-timeout"}

// verbOf returns the verb args run when it is certain (one of verbs,
// after global flags only, and no help asked for), so that only its
// command is made: the start of every bgjob process; "" otherwise, for
// the whole tree (help, completion, errors that suggest a verb).
func verbOf(args []string) string {
	verb := ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return verb
		case verb != "":
			if arg == "-h" || arg == "--help" {
				return ""
			}
		case strings.HasPrefix(arg, "-"):
			if !slices.Contains(globalValueFlags, arg) {
				// --root=DIR, -wNAME; anything else is for the
				// whole tree to read (--version, --help, a typo).
				name, _, ok := strings.Cut(arg, "=")
				if !ok && len(arg) > 2 && arg[1] != '-' {
					name = arg[:2]
				}
				if !slices.Contains(globalValueFlags, name) {
					return ""
				}
				continue
			}
			i++
		default:
			for _, v := range verbs {
				if v.name == arg {
					verb = arg
				}
			}
			if verb == "" {
				return ""
			}
		}
	}
	return verb
}

// rootCommand returns bgjob's root command with every verb, or with only
// the verb named by only.
func (a *app) rootCommand(only string) *cobra.Command {
	long, example := help("bgjob")
	cmd := &cobra.Command{
		Use:           "bgjob",
		Short:         "Run shell commands as detached background jobs, locally or over SSH",
		Long:          long,
		Example:       example,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetFlagErrorFunc(flagError)
	f := cmd.PersistentFlags()
	f.StringVarP(&a.workspace, "workspace", "w", "default", "workspace (env BGJOB_WORKSPACE)")
	f.StringVar(&a.root, "root", "", "root directory of all jobs on the host (env BGJOB_ROOT; default /tmp/bgjob-$UID)")
	f.StringArrayVarP(&a.hostArgs, "host", "H", nil, "run on this host: an SSH host, [user@]host[:port] or an ssh_config alias, or a container, docker://[user@]NAME or podman://[user@]NAME; repeat it, give a comma list or @FILE for several (env BGJOB_HOST)")
	f.IntVar(&a.parallel, "parallel", bgjob.DefaultParallel, "with several hosts, work on at most this many at once")
	f.StringVar(&a.sshConfig, "ssh-config", "", "ssh_config file (env BGJOB_SSH_CONFIG; default ~/.ssh/config)")
	f.StringVar(&a.via, "via", "", "reach each host of -H by running this command, %h standing for the host (appended when absent), then \"sh -s\": e.g. 'kubectl exec -i %h --', 'podman exec -i %h', 'ssh -F cfg %h' (env BGJOB_VIA; see bgjob --help)")
	f.DurationVar(&a.hostTimeout, "host-timeout", bgjob.DefaultHostTimeout, "give each host this long to answer, connecting included: the whole verb, or the first answer of one that waits (0: no limit; env BGJOB_HOST_TIMEOUT)")
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return a.setup(cmd.Context(), cmd)
	}
	for _, v := range verbs {
		if only == "" || v.name == only {
			cmd.AddCommand(v.make(a))
		}
	}
	if only != "" {
		return cmd
	}
	// Listed in help and the generated docs like any other command.
	cmd.InitDefaultCompletionCmd()
	a.completions(cmd)
	return cmd
}

// setup completes the global flags of cmd once they are parsed, before the
// command runs (and before it completes a word: see complete.go). The
// environment fills in flags not given, at run time, so that help and the
// generated docs do not depend on it.
func (a *app) setup(ctx context.Context, cmd *cobra.Command) error {
	for name, env := range map[string]string{"workspace": "BGJOB_WORKSPACE", "root": "BGJOB_ROOT", "host": "BGJOB_HOST", "ssh-config": "BGJOB_SSH_CONFIG", "host-timeout": "BGJOB_HOST_TIMEOUT", "via": "BGJOB_VIA"} {
		if v := os.Getenv(env); v != "" && !cmd.Flags().Changed(name) {
			if err := cmd.Flags().Set(name, v); err != nil {
				return usageError("%s=%s: %v", env, v, err)
			}
		}
	}
	if handoverErr != nil {
		return handoverErr
	}
	if full == nil {
		if name := fullCommand(cmd); name != "" {
			return needFull("bgjob "+name, a.args)
		}
		// An SSH host or a container: bgjob-full's transports. Not
		// for version, help and completion scripts, which reach no
		// host.
		if h, ok := remoteHosts(a.hostArgs); ok && a.via == "" && usesWorkspace(cmd) {
			return needFull("host "+h, a.args)
		}
	}
	if a.hostTimeout < 0 {
		return usageError("--host-timeout must not be negative")
	}
	if a.via != "" {
		if _, err := via.Split(a.via); err != nil {
			return usageError("--via: %v", err)
		}
	}
	if a.workspace == "" && usesWorkspace(cmd) {
		return usageError("the workspace must not be empty")
	}
	return a.setHosts(ctx)
}

// fullCommand returns the name of the verb cmd is, or is under, when only
// bgjob-full serves it (see Full); "" otherwise.
func fullCommand(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "mcp", "top", "attach":
			return c.Name()
		}
	}
	return ""
}

// usesWorkspace reports whether cmd works in a workspace: every verb but
// version, help and the shell completion scripts.
func usesWorkspace(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "help", "completion":
			return false
		}
	}
	return true
}

// connect connects to host ("" for this machine) and returns a client and
// a function that releases the connection; it is the DialFunc of a.fleet.
func (a *app) connect(ctx context.Context, h string) (*bgjob.Client, func(), error) {
	return a.connectWith()(ctx, h)
}

// connectWith is a.connect for clients made with opts.
func (a *app) connectWith(opts ...bgjob.ClientOption) bgjob.DialFunc {
	return func(ctx context.Context, h string) (*bgjob.Client, func(), error) {
		return a.client(ctx, h, true, opts...)
	}
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	// cobra's own messages for arguments and commands it rejects.
	for _, p := range []string{"unknown command ", "accepts ", "requires at least ", "requires at most ", "unknown flag: ", "unknown shorthand flag: "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// joined returns the errors err joins (errors.Join: each job of several
// that failed), each to be its own line on stderr, or err alone. A
// wrapper that adds no words is looked through; a host's line is each
// error's, naming the host.
func joined(err error) []error {
	if parts, ok := joinOf(err); ok {
		var all []error
		for _, s := range parts {
			all = append(all, joined(s)...)
		}
		return all
	}
	switch e := err.(type) {
	case *bgjob.Error:
		// A host's error over several jobs: each names the host.
		if e.Ref == "" && e.Workspace == "" && e.Err != nil {
			if subs := joined(e.Err); len(subs) > 1 {
				for i, s := range subs {
					subs[i] = &bgjob.Error{Kind: bgjob.KindOf(s), Host: e.Host, Err: s}
				}
				return subs
			}
		}
	case *hostLine:
		subs := joined(e.err)
		if len(subs) < 2 {
			return []error{err}
		}
		for i, s := range subs {
			subs[i] = &hostLine{host: e.host, err: s}
		}
		return subs
	}
	if u := errors.Unwrap(err); u != nil && u.Error() == err.Error() {
		if subs := joined(u); len(subs) > 1 {
			return subs
		}
	}
	return []error{err}
}

// joinOf returns the errors err is a join of (errors.Join: its message is
// theirs, a line each), and whether it is one. An error that wraps several
// in words of its own (fmt.Errorf("%w: %w", ...)) is not.
func joinOf(err error) ([]error, bool) {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil, false
	}
	parts := j.Unwrap()
	msgs := make([]string, len(parts))
	for i, p := range parts {
		msgs[i] = p.Error()
	}
	return parts, len(parts) > 1 && err.Error() == strings.Join(msgs, "\n")
}
