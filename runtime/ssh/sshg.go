package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// sshG asks OpenSSH: "ssh -G" prints the configuration ssh would use for
// the host, with Match, Include and most tokens already handled. Answers
// are kept in cache (when set) until a file they were read from changes.
type sshG struct {
	binary     string
	configFile string // "" means what ssh reads by default
	cache      *configCache
}

// sshGKeys are the keywords kept from ssh -G's answer: those build reads,
// and canonicalizehostname, which says whether the answer depends on DNS.
var sshGKeys = map[string]bool{"canonicalizehostname": true}

func init() {
	for _, k := range parserKeys {
		sshGKeys[k] = true
	}
}

func (s *sshG) lookup(ctx context.Context, sp spec, opts []string) (values, error) {
	args := []string{"-G", "-v"}
	if s.configFile != "" {
		f := s.configFile
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

	key := s.cache.key(s.binary, args)
	if v, ok := s.cache.get(key); ok {
		return v, nil
	}
	started := time.Now()
	cmd := exec.CommandContext(ctx, s.binary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var msg []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "debug") {
				msg = append(msg, l)
			}
		}
		return nil, fmt.Errorf("reading ssh config with ssh -G: %v: %s", err, strings.Join(msg, "; "))
	}
	v := values{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, val, _ := strings.Cut(sc.Text(), " ")
		k = strings.ToLower(k)
		if sshGKeys[k] {
			v[k] = append(v[k], val)
		}
	}
	v.splitFields("userknownhostsfile", "globalknownhostsfile")
	s.cache.put(key, v, s.read(stderr.Bytes()), started)
	return v, nil
}

// read lists the config files ssh says it read ("debug1: Reading
// configuration data FILE"), and those it would read by default even when
// they do not exist yet: a new ~/.ssh/config changes the answer too.
func (s *sshG) read(stderr []byte) []string {
	var files []string
	if s.configFile != "" {
		files = append(files, s.configFile)
	} else {
		files = append(files, filepath.Join(homeDir(), ".ssh", "config"), "/etc/ssh/ssh_config")
	}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		if _, f, ok := strings.Cut(sc.Text(), "Reading configuration data "); ok {
			if abs, err := filepath.Abs(strings.TrimSpace(f)); err == nil {
				files = append(files, abs)
			}
		}
	}
	return files
}
