package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// sshG asks OpenSSH: "ssh -G" prints the configuration ssh would use for
// the host, with Match, Include and most tokens already handled.
type sshG struct {
	binary     string
	configFile string // "" means what ssh reads by default
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
	args := []string{"-G"}
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
	return v, nil
}
