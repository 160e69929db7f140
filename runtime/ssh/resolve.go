package ssh

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// hostConfig is the resolved ssh_config for one host (a target or a hop).
type hostConfig struct {
	name     string // the host as given, for messages
	given    spec   // name parsed
	alias    string // the host part looked up in ssh_config (%n)
	hostname string
	port     string
	user     string

	identityFiles    []string // expanded
	certificateFiles []string // expanded
	identitiesOnly   bool
	identityAgent    string // expanded socket path; "none" disables; "" means SSH_AUTH_SOCK

	proxyJump    string // "" when unset
	proxyCommand string // "" when unset

	strictHostKeyChecking string // "yes", "accept-new" or "no"
	userKnownHostsFiles   []string
	globalKnownHostsFiles []string
	hashKnownHosts        bool
	hostKeyAlias          string

	connectTimeout time.Duration
	aliveInterval  time.Duration
	aliveCountMax  int
	controlPath    string // "" when unset or none
}

// addr is the TCP address to connect to.
func (c *hostConfig) addr() string { return net.JoinHostPort(c.hostname, c.port) }

// spec is a host as a user writes it: [user@]host[:port] or
// ssh://[user@]host[:port].
type spec struct {
	user, host, port string
}

func parseSpec(s string) (spec, error) {
	orig := s
	s = strings.TrimPrefix(s, "ssh://")
	var sp spec
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		sp.user, s = s[:i], s[i+1:]
	}
	switch {
	case strings.HasPrefix(s, "["):
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			// "[::1]" without a port
			if strings.HasSuffix(s, "]") {
				h, p, err = s[1:len(s)-1], "", nil
			} else {
				return spec{}, fmt.Errorf("invalid host %q: %w", orig, err)
			}
		}
		sp.host, sp.port = h, p
	case strings.Count(s, ":") == 1:
		sp.host, sp.port, _ = strings.Cut(s, ":")
	default:
		sp.host = s
	}
	if sp.host == "" || strings.HasPrefix(sp.host, "-") || strings.ContainsAny(sp.host, " \t\n/") {
		return spec{}, fmt.Errorf("invalid host %q", orig)
	}
	if sp.port != "" {
		if n, err := strconv.Atoi(sp.port); err != nil || n <= 0 || n > 65535 {
			return spec{}, fmt.Errorf("invalid port in %q", orig)
		}
	}
	return sp, nil
}

// values holds lowercased ssh_config keywords and their values in the form
// "ssh -G" prints them: one entry per line, several for repeatable keywords
// and for the known-hosts lists.
type values map[string][]string

func (v values) get(k string) string {
	if s := v[k]; len(s) > 0 {
		return s[0]
	}
	return ""
}

// splitFields splits the one-line lists of keys (known-hosts files) into
// one entry per file.
func (v values) splitFields(keys ...string) {
	for _, k := range keys {
		var all []string
		for _, s := range v[k] {
			all = append(all, strings.Fields(s)...)
		}
		if all != nil {
			v[k] = all
		}
	}
}

// configSource reads what ssh_config says about one host. It returns
// values as "ssh -G" prints them; what it leaves out, withDefaults fills.
// opts are "Keyword=value" overrides, as with "ssh -o". sshG and
// configParser implement it.
type configSource interface {
	lookup(ctx context.Context, sp spec, opts []string) (values, error)
}

// resolver turns host specs into hostConfigs: it asks "ssh -G" (OpenSSH's
// exact answer) and reads ssh_config itself only when ssh is not installed
// or fails.
type resolver struct {
	options []string     // applied to the target only
	sshG    configSource // nil when there is no ssh binary
	parser  configSource
	warn    func(string)
}

// newResolver builds the resolver Dial uses for opts.
func newResolver(opts Options) *resolver {
	r := &resolver{
		options: opts.ConfigOptions,
		parser:  &configParser{configFile: opts.ConfigFile, warn: opts.warn()},
		warn:    opts.warn(),
	}
	bin := opts.sshBinary
	switch bin {
	case "":
		bin, _ = exec.LookPath("ssh")
	case "-":
		bin = ""
	}
	if bin != "" {
		cf := opts.ConfigFile
		if abs, err := filepath.Abs(cf); cf != "" && err == nil {
			cf = abs
		}
		r.sshG = &sshG{binary: bin, configFile: cf, cache: newConfigCache(opts.CacheDir)}
	}
	return r
}

func (r *resolver) resolve(ctx context.Context, hostSpec string, target bool) (*hostConfig, error) {
	sp, err := parseSpec(hostSpec)
	if err != nil {
		return nil, err
	}
	var opts []string
	if target {
		opts = r.options
	}
	v, err := r.lookup(ctx, sp, opts)
	if err != nil {
		return nil, err
	}
	if err := withDefaults(sp, v); err != nil {
		return nil, err
	}
	return build(hostSpec, sp, v)
}

func (r *resolver) lookup(ctx context.Context, sp spec, opts []string) (values, error) {
	if r.sshG != nil {
		v, err := r.sshG.lookup(ctx, sp, opts)
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		r.warn(fmt.Sprintf("%v; reading the ssh config with bgjob's own parser instead", err))
	}
	return r.parser.lookup(ctx, sp, opts)
}

// defaultIdentityFiles are OpenSSH 9's, in its order; missing files are
// skipped when keys are loaded.
var defaultIdentityFiles = []string{"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk",
	"~/.ssh/id_ed25519", "~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss", "~/.ssh/id_dsa"}

// withDefaults fills in v what the config left unset: OpenSSH's defaults
// ("ssh -G" prints most of them already) and bgjob's own for the timeouts
// OpenSSH leaves off. It is the only place defaults are applied.
func withDefaults(sp spec, v values) error {
	def := func(k string, unset []string, d ...string) {
		s := v.get(k)
		for _, u := range unset {
			if s == u {
				v[k] = d
				return
			}
		}
	}
	def("hostname", []string{""}, sp.host)
	def("port", []string{""}, "22")
	if v.get("user") == "" {
		u, err := user.Current()
		if err != nil {
			return fmt.Errorf("current user: %w", err)
		}
		v["user"] = []string{u.Username}
	}
	if len(v["identityfile"]) == 0 {
		v["identityfile"] = defaultIdentityFiles
	}
	def("userknownhostsfile", []string{""}, "~/.ssh/known_hosts", "~/.ssh/known_hosts2")
	def("globalknownhostsfile", []string{""}, "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
	def("stricthostkeychecking", []string{""}, "ask")
	def("connecttimeout", []string{"", "none", "0"}, defaultConnectTimeout)
	def("serveraliveinterval", []string{"", "none", "0"}, defaultAliveInterval)
	def("serveralivecountmax", []string{"", "0"}, defaultAliveCountMax)
	return nil
}

// build turns values with defaults into a hostConfig, expanding the
// tokens and ~ of HostName and the paths. Paths "ssh -G" already expanded
// come through unchanged.
func build(name string, sp spec, v values) (*hostConfig, error) {
	c := &hostConfig{
		name:         name,
		given:        sp,
		alias:        sp.host,
		port:         v.get("port"),
		user:         v.get("user"),
		hostKeyAlias: v.get("hostkeyalias"),
	}
	// HostName takes only %h (the alias) and %%.
	c.hostname = newTokens(sp.host, sp.host, c.port, c.user).expandOnly(v.get("hostname"), "h%")
	t := newTokens(sp.host, c.hostname, c.port, c.user)
	c.identityFiles = t.expandAll(v["identityfile"])
	c.certificateFiles = t.expandAll(v["certificatefile"])
	c.identitiesOnly = yes(v.get("identitiesonly"))
	c.identityAgent = identityAgent(t, v.get("identityagent"))
	c.proxyJump = unlessNone(v.get("proxyjump"))
	c.proxyCommand = unlessNone(v.get("proxycommand"))
	c.strictHostKeyChecking = strictHostKeyChecking(v.get("stricthostkeychecking"))
	c.userKnownHostsFiles = t.expandAll(withoutNone(v["userknownhostsfile"]))
	c.globalKnownHostsFiles = t.expandAll(withoutNone(v["globalknownhostsfile"]))
	c.hashKnownHosts = yes(v.get("hashknownhosts"))
	if err := c.setTimeouts(v); err != nil {
		return nil, err
	}
	if p := unlessNone(v.get("controlpath")); p != "" {
		c.controlPath = t.expand(p)
	}
	return c, nil
}

// identityAgent is hostConfig.identityAgent for IdentityAgent a: ""
// for SSH_AUTH_SOCK's socket, "none", or the socket's path.
func identityAgent(t tokens, a string) string {
	switch {
	case a == "" || a == "SSH_AUTH_SOCK":
		return ""
	case a == "none":
		return "none"
	case strings.HasPrefix(a, "$") && !strings.HasPrefix(a, "${"):
		// "$VAR" names an environment variable holding the socket path.
		if sock := os.Getenv(a[1:]); sock != "" {
			return sock
		}
		return "none"
	}
	return t.expand(a)
}

// strictHostKeyChecking is hostConfig.strictHostKeyChecking for the
// StrictHostKeyChecking value s.
func strictHostKeyChecking(s string) string {
	switch strings.ToLower(s) {
	case "no", "false", "off":
		return "no"
	case "accept-new":
		return "accept-new"
	}
	return "yes" // yes, ask (no one to ask)
}

// setTimeouts sets the connect timeout and the keepalive's interval and
// count from v.
func (c *hostConfig) setTimeouts(v values) error {
	var err error
	if c.connectTimeout, err = seconds(v.get("connecttimeout")); err != nil {
		return fmt.Errorf("ConnectTimeout: %w", err)
	}
	if c.aliveInterval, err = seconds(v.get("serveraliveinterval")); err != nil {
		return fmt.Errorf("ServerAliveInterval: %w", err)
	}
	s := v.get("serveralivecountmax")
	if c.aliveCountMax, err = strconv.Atoi(s); err != nil || c.aliveCountMax <= 0 {
		return fmt.Errorf("ServerAliveCountMax: invalid value %q", s)
	}
	return nil
}

// unlessNone returns s, or "" when it is "none".
func unlessNone(s string) string {
	if s == "none" {
		return ""
	}
	return s
}

// withoutNone returns the entries of list that are not "none".
func withoutNone(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "none" {
			out = append(out, s)
		}
	}
	return out
}

func yes(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "true":
		return true
	}
	return false
}

// seconds parses an ssh_config time value: a number of seconds, or a
// duration such as 1m or 30s.
func seconds(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	return d, nil
}
