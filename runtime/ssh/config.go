package ssh

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/kevinburke/ssh_config"
)

// Defaults for settings OpenSSH leaves unset or at 0.
const (
	defaultConnectTimeout = 15 * time.Second
	defaultAliveInterval  = 15 * time.Second
	defaultAliveCountMax  = 3
)

// hostConfig is the resolved ssh_config for one host (a target or a hop).
type hostConfig struct {
	name     string // the host as given, for messages
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

// resolver turns host specs into hostConfigs.
type resolver struct {
	configFile string   // "" means what ssh reads by default
	options    []string // "Key=Value", applied to the target only
	sshBinary  string   // "" means the fallback parser
	warn       func(string)
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
	var v values
	if r.sshBinary != "" {
		v, err = r.sshG(ctx, sp, opts)
	} else {
		v, err = r.fallback(sp, opts)
	}
	if err != nil {
		return nil, err
	}
	return build(hostSpec, sp, v)
}

// values holds lowercased ssh_config keywords and their values, in the form
// ssh -G prints: one entry per line, several for repeatable keywords.
type values map[string][]string

func (v values) get(k string) string {
	if s := v[k]; len(s) > 0 {
		return s[0]
	}
	return ""
}

// sshG asks OpenSSH: ssh -G prints the configuration it would use for the
// host, with Match, Include and most tokens already handled.
func (r *resolver) sshG(ctx context.Context, sp spec, opts []string) (values, error) {
	args := []string{"-G"}
	if r.configFile != "" {
		f := r.configFile
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			f = "/dev/null"
		}
		args = append(args, "-F", f)
	}
	if sp.port != "" {
		args = append(args, "-p", sp.port)
	}
	if sp.user != "" {
		args = append(args, "-l", sp.user)
	}
	for _, o := range opts {
		args = append(args, "-o", o)
	}
	args = append(args, "--", sp.host)
	cmd := exec.CommandContext(ctx, r.sshBinary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdin = nil
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading ssh config (ssh -G): %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	v := values{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, val, _ := strings.Cut(sc.Text(), " ")
		if k == "" {
			continue
		}
		v[strings.ToLower(k)] = append(v[strings.ToLower(k)], val)
	}
	// ssh -G prints the known_hosts lists on one line each.
	for _, k := range []string{"userknownhostsfile", "globalknownhostsfile"} {
		if s := v.get(k); s != "" {
			v[k] = strings.Fields(s)
		}
	}
	return v, nil
}

// fallbackKeys are the keywords read from ssh_config without ssh.
var fallbackKeys = []string{
	"hostname", "user", "port", "identityfile", "certificatefile", "identitiesonly", "identityagent",
	"proxyjump", "proxycommand", "stricthostkeychecking", "userknownhostsfile", "globalknownhostsfile",
	"hashknownhosts", "hostkeyalias", "connecttimeout", "serveraliveinterval", "serveralivecountmax",
	"controlpath",
}

var multiKeys = map[string]bool{"identityfile": true, "certificatefile": true}

// fallback reads ssh_config with github.com/kevinburke/ssh_config when there
// is no ssh binary. It does not know Match beyond "Match host" and "Match
// all"; on those it warns and goes on with defaults.
func (r *resolver) fallback(sp spec, opts []string) (values, error) {
	v := values{}
	// Command-line style overrides win: OpenSSH keeps the first value.
	for _, o := range opts {
		k, val, ok := strings.Cut(o, "=")
		if !ok {
			k, val, _ = strings.Cut(o, " ")
		}
		k = strings.ToLower(strings.TrimSpace(k))
		val = strings.TrimSpace(val)
		if k == "userknownhostsfile" || k == "globalknownhostsfile" {
			v[k] = append(v[k], strings.Fields(val)...)
		} else if multiKeys[k] || len(v[k]) == 0 {
			v[k] = append(v[k], val)
		}
	}
	if sp.user != "" {
		v["user"] = []string{sp.user}
	}
	if sp.port != "" {
		v["port"] = []string{sp.port}
	}
	settings := &ssh_config.UserSettings{}
	skip := false
	if r.configFile != "" {
		f := r.configFile
		if _, err := os.Stat(f); err != nil {
			skip = true
		}
		settings.ConfigFinder(func() string { return f })
	}
	for _, k := range fallbackKeys {
		if skip {
			break
		}
		if multiKeys[k] {
			all, err := settings.GetAllStrict(sp.host, k)
			if err != nil {
				r.warn(fmt.Sprintf("reading ssh config: %v; using defaults", err))
				skip = true
				break
			}
			for _, a := range all {
				if a != ssh_config.Default(k) {
					v[k] = append(v[k], a)
				}
			}
			continue
		}
		if len(v[k]) > 0 {
			continue
		}
		val, err := settings.GetStrict(sp.host, k)
		if err != nil {
			r.warn(fmt.Sprintf("reading ssh config: %v; using defaults", err))
			skip = true
			break
		}
		if val != "" && val != ssh_config.Default(k) {
			v[k] = []string{val}
		}
	}
	if len(v["identityfile"]) == 0 {
		// OpenSSH 9's defaults, in its order; missing files are skipped.
		v["identityfile"] = []string{"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk",
			"~/.ssh/id_ed25519", "~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss", "~/.ssh/id_dsa"}
	}
	if len(v["userknownhostsfile"]) == 1 {
		v["userknownhostsfile"] = strings.Fields(v["userknownhostsfile"][0])
	}
	if len(v["userknownhostsfile"]) == 0 {
		v["userknownhostsfile"] = []string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}
	}
	if len(v["globalknownhostsfile"]) == 1 {
		v["globalknownhostsfile"] = strings.Fields(v["globalknownhostsfile"][0])
	}
	if len(v["globalknownhostsfile"]) == 0 {
		v["globalknownhostsfile"] = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
	}
	if v.get("hostname") == "" {
		v["hostname"] = []string{sp.host}
	}
	if v.get("port") == "" {
		v["port"] = []string{"22"}
	}
	if v.get("user") == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("current user: %w", err)
		}
		v["user"] = []string{u.Username}
	}
	// Tokens in HostName, then in the paths, as OpenSSH does.
	t := newTokens(sp.host, v.get("hostname"), v.get("port"), v.get("user"))
	v["hostname"] = []string{strings.ReplaceAll(v.get("hostname"), "%h", sp.host)}
	t.h = v.get("hostname")
	for _, k := range []string{"userknownhostsfile", "globalknownhostsfile", "controlpath"} {
		for i, p := range v[k] {
			if p != "none" {
				v[k][i] = t.expand(p)
			}
		}
	}
	return v, nil
}

// build turns values into a hostConfig, expanding what ssh -G leaves raw.
func build(name string, sp spec, v values) (*hostConfig, error) {
	c := &hostConfig{
		name:         name,
		alias:        sp.host,
		hostname:     v.get("hostname"),
		port:         v.get("port"),
		user:         v.get("user"),
		hostKeyAlias: v.get("hostkeyalias"),
	}
	if c.hostname == "" {
		c.hostname = sp.host
	}
	if c.port == "" {
		c.port = "22"
	}
	t := newTokens(sp.host, c.hostname, c.port, c.user)
	for _, f := range v["identityfile"] {
		c.identityFiles = append(c.identityFiles, t.expand(f))
	}
	for _, f := range v["certificatefile"] {
		c.certificateFiles = append(c.certificateFiles, t.expand(f))
	}
	c.identitiesOnly = yes(v.get("identitiesonly"))
	switch a := v.get("identityagent"); {
	case a == "" || a == "SSH_AUTH_SOCK":
	case a == "none":
		c.identityAgent = "none"
	case strings.HasPrefix(a, "$") && !strings.HasPrefix(a, "${"):
		// "$VAR" names an environment variable holding the socket path.
		c.identityAgent = os.Getenv(a[1:])
		if c.identityAgent == "" {
			c.identityAgent = "none"
		}
	default:
		c.identityAgent = t.expand(a)
	}
	if p := v.get("proxyjump"); p != "none" {
		c.proxyJump = p
	}
	if p := v.get("proxycommand"); p != "none" {
		c.proxyCommand = p
	}
	switch s := strings.ToLower(v.get("stricthostkeychecking")); s {
	case "no", "false", "off":
		c.strictHostKeyChecking = "no"
	case "accept-new":
		c.strictHostKeyChecking = "accept-new"
	default: // yes, ask (no one to ask), unset
		c.strictHostKeyChecking = "yes"
	}
	for _, f := range v["userknownhostsfile"] {
		if f != "none" {
			c.userKnownHostsFiles = append(c.userKnownHostsFiles, t.expand(f))
		}
	}
	for _, f := range v["globalknownhostsfile"] {
		if f != "none" {
			c.globalKnownHostsFiles = append(c.globalKnownHostsFiles, t.expand(f))
		}
	}
	c.hashKnownHosts = yes(v.get("hashknownhosts"))
	var err error
	if c.connectTimeout, err = seconds(v.get("connecttimeout"), defaultConnectTimeout); err != nil {
		return nil, fmt.Errorf("ConnectTimeout: %w", err)
	}
	if c.aliveInterval, err = seconds(v.get("serveraliveinterval"), defaultAliveInterval); err != nil {
		return nil, fmt.Errorf("ServerAliveInterval: %w", err)
	}
	c.aliveCountMax = defaultAliveCountMax
	if s := v.get("serveralivecountmax"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("ServerAliveCountMax: invalid value %q", s)
		}
		if n > 0 {
			c.aliveCountMax = n
		}
	}
	if p := v.get("controlpath"); p != "" && p != "none" {
		c.controlPath = t.expand(p)
	}
	return c, nil
}

func yes(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "true":
		return true
	}
	return false
}

// seconds parses an ssh_config time value: a plain number of seconds, or
// "none"/"0"/"" for def.
func seconds(s string, def time.Duration) (time.Duration, error) {
	switch s {
	case "", "none", "0":
		return def, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s) // 1m, 30s
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	return d, nil
}

// tokens expands ~, ${ENV} and the %-tokens of ssh_config paths.
type tokens struct {
	n, h, p, r string // alias, hostname, port, remote user
}

func newTokens(alias, hostname, port, remoteUser string) tokens {
	return tokens{n: alias, h: hostname, p: port, r: remoteUser}
}

// homeDir is the home directory of the current user from the password
// database, as OpenSSH uses it for ~ and %d; $HOME when that fails.
func homeDir() string {
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	h, _ := os.UserHomeDir()
	return h
}

func (t tokens) expand(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = homeDir() + s[1:]
	}
	if strings.Contains(s, "${") {
		s = os.Expand(s, func(k string) string {
			if k == "$" {
				return "$"
			}
			return os.Getenv(k)
		})
	}
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(t.h)
		case 'p':
			b.WriteString(t.p)
		case 'r':
			b.WriteString(t.r)
		case 'n':
			b.WriteString(t.n)
		case 'd':
			b.WriteString(homeDir())
		case 'u':
			if u, err := user.Current(); err == nil {
				b.WriteString(u.Username)
			}
		case 'i':
			b.WriteString(strconv.Itoa(os.Getuid()))
		case 'L', 'l':
			h, _ := os.Hostname()
			if s[i] == 'L' {
				h, _, _ = strings.Cut(h, ".")
			}
			b.WriteString(h)
		case 'C':
			h, _ := os.Hostname()
			sum := sha1.Sum([]byte(h + t.h + t.p + t.r))
			b.WriteString(hex.EncodeToString(sum[:]))
		default:
			b.WriteByte('%')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
