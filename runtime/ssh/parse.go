package ssh

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// configParser reads ssh_config with github.com/kevinburke/ssh_config, for when
// there is no ssh binary or "ssh -G" fails. It knows Host and "Match host"
// / "Match all", but not Match user, final or exec: on those it warns and
// goes on as if the file set nothing. It returns values raw, tokens and ~
// unexpanded, with no defaults: build and withDefaults do that for both
// sources alike.
type configParser struct {
	configFile string // "" means ~/.ssh/config and /etc/ssh/ssh_config
	warn       func(string)
}

// parserKeys are the keywords read from ssh_config without ssh.
var parserKeys = []string{
	"hostname", "user", "port", "identityfile", "certificatefile", "identitiesonly", "identityagent",
	"proxyjump", "proxycommand", "stricthostkeychecking", "userknownhostsfile", "globalknownhostsfile",
	"hashknownhosts", "hostkeyalias", "connecttimeout", "serveraliveinterval", "serveralivecountmax",
	"controlpath",
}

var multiKeys = map[string]bool{"identityfile": true, "certificatefile": true}

func (p *configParser) lookup(_ context.Context, sp spec, opts []string) (values, error) {
	v := values{}
	// Command-line style overrides win: OpenSSH keeps the first value.
	for _, o := range opts {
		k, val, ok := strings.Cut(o, "=")
		if !ok {
			k, val, _ = strings.Cut(o, " ")
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if multiKeys[k] || len(v[k]) == 0 {
			v[k] = append(v[k], strings.TrimSpace(val))
		}
	}
	if sp.user != "" {
		v["user"] = []string{sp.user}
	}
	if sp.port != "" {
		v["port"] = []string{sp.port}
	}
	settings := &ssh_config.UserSettings{}
	if p.configFile != "" {
		if _, err := os.Stat(p.configFile); err != nil {
			// A missing -F file counts as an empty one.
			v.splitFields("userknownhostsfile", "globalknownhostsfile")
			return v, nil
		}
		settings.ConfigFinder(func() string { return p.configFile })
	}
	for _, k := range parserKeys {
		if multiKeys[k] {
			all, err := settings.GetAllStrict(sp.host, k)
			if err != nil {
				p.warn(fmt.Sprintf("reading ssh config: %v; using defaults", err))
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
			p.warn(fmt.Sprintf("reading ssh config: %v; using defaults", err))
			break
		}
		if val != "" && val != ssh_config.Default(k) {
			v[k] = []string{val}
		}
	}
	v.splitFields("userknownhostsfile", "globalknownhostsfile")
	return v, nil
}
