package ssh

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/skeema/knownhosts"
	gossh "golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"

	"github.com/bgjob/bgjob/shellgen"
)

// hostKeyChecker verifies a server's host key against known_hosts following
// StrictHostKeyChecking, and remembers why it refused one.
type hostKeyChecker struct {
	cfg  *hostConfig
	name string // "host:port" looked up in known_hosts; HostKeyAlias:22 with an alias
	db   *knownhosts.HostKeyDB
	warn func(string)

	err error // the refusal, set by check

	configFile string // the ssh_config given, "" for the default
}

// sshCommand is the ssh command line that reaches the host as bgjob does:
// with -F FILE when bgjob was given an ssh_config, which ssh alone would
// not read, and a port given with the host as -p PORT, since ssh takes no
// "host:port" (nor "[::1]:port") as its destination.
func (h *hostKeyChecker) sshCommand() string {
	argv := h.sshArgv()
	if q, err := shellgen.QuoteArgv(argv); err == nil {
		return q
	}
	return strings.Join(argv, " ")
}

// sshArgv is sshCommand's argument vector.
func (h *hostKeyChecker) sshArgv() []string {
	argv := []string{"ssh"}
	if h.configFile != "" {
		argv = append(argv, "-F", h.configFile)
	}
	g := h.cfg.given
	if g.port != "" {
		argv = append(argv, "-p", g.port)
	}
	dest := g.host
	if g.user != "" {
		dest = g.user + "@" + dest
	}
	return append(argv, dest)
}

// newHostKeyChecker checks the host keys of cfg's host; configFile is the
// ssh_config bgjob was given ("" for the default), for the command a
// refusal suggests.
func newHostKeyChecker(cfg *hostConfig, configFile string, warn func(string)) (*hostKeyChecker, error) {
	name := net.JoinHostPort(cfg.hostname, cfg.port)
	if cfg.hostKeyAlias != "" {
		// OpenSSH uses the alias as it is, without the port.
		name = net.JoinHostPort(cfg.hostKeyAlias, "22")
	}
	h := &hostKeyChecker{cfg: cfg, name: name, warn: warn, configFile: configFile}
	var files []string
	for _, f := range append(append([]string{}, cfg.userKnownHostsFiles...), cfg.globalKnownHostsFiles...) {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		db, err := knownhosts.NewDB(files...)
		if err != nil {
			return nil, fmt.Errorf("reading known hosts: %w", err)
		}
		h.db = db
	}
	return h, nil
}

// algorithms lists the host key algorithms to offer: those of the keys
// known for the host, so that a known ed25519 key is asked for even when the
// server prefers ECDSA; for an unknown host, OpenSSH's default order
// (opensshHostKeyAlgorithms), so that the key a refusal quotes, or that
// accept-new records, is the one ssh would show.
func (h *hostKeyChecker) algorithms() []string {
	if h.db != nil {
		if algos := h.db.HostKeyAlgorithms(h.name); len(algos) > 0 {
			return algos
		}
	}
	return opensshHostKeyAlgorithms
}

// opensshHostKeyAlgorithms is OpenSSH's default HostKeyAlgorithms (ssh -Q
// HostKeyAlgorithms lists them; man ssh_config gives the order), less the
// security-key ones x/crypto does not verify: ed25519 before ECDSA before
// RSA. x/crypto's own default puts ECDSA and RSA first.
var opensshHostKeyAlgorithms = []string{
	gossh.CertAlgoED25519v01,
	gossh.CertAlgoECDSA256v01,
	gossh.CertAlgoECDSA384v01,
	gossh.CertAlgoECDSA521v01,
	gossh.CertAlgoRSASHA512v01,
	gossh.CertAlgoRSASHA256v01,
	gossh.KeyAlgoED25519,
	gossh.KeyAlgoECDSA256,
	gossh.KeyAlgoECDSA384,
	gossh.KeyAlgoECDSA521,
	gossh.KeyAlgoRSASHA512,
	gossh.KeyAlgoRSASHA256,
}

// check is the gossh.HostKeyCallback.
func (h *hostKeyChecker) check(_ string, remote net.Addr, key gossh.PublicKey) error {
	h.err = h.verify(remote, key)
	return h.err
}

func (h *hostKeyChecker) verify(remote net.Addr, key gossh.PublicKey) error {
	var err error
	if h.db != nil {
		err = h.db.HostKeyCallback()(h.name, remote, key)
		if err == nil {
			return nil
		}
	} else {
		err = &xknownhosts.KeyError{}
	}
	display := knownhosts.Normalize(h.name)
	presented := fmt.Sprintf("%s %s", key.Type(), gossh.FingerprintSHA256(key))
	var revoked *xknownhosts.RevokedError
	switch {
	case errors.As(err, &revoked):
		return fmt.Errorf("host key %s for %s is marked as revoked in %s:%d", presented, display, revoked.Revoked.Filename, revoked.Revoked.Line)

	case knownhosts.IsHostUnknown(err):
		switch h.cfg.strictHostKeyChecking {
		case "accept-new", "no":
			if err := h.remember(key); err != nil {
				return err
			}
			h.warn(fmt.Sprintf("permanently added %s (%s) to the list of known hosts", display, presented))
			return nil
		}
		return fmt.Errorf("%w: no host key for %s is known (it presented %s); to trust it, check the fingerprint and run \"%s\" once, or set StrictHostKeyChecking accept-new in the ssh config (known hosts files: %s)",
			ErrUnknownHost, display, presented, h.sshCommand(), strings.Join(h.cfg.userKnownHostsFiles, ", "))

	case knownhosts.IsHostKeyChanged(err):
		var keyErr *xknownhosts.KeyError
		errors.As(err, &keyErr)
		var want []string
		for _, k := range keyErr.Want {
			want = append(want, fmt.Sprintf("%s %s (%s:%d)", k.Key.Type(), gossh.FingerprintSHA256(k.Key), k.Filename, k.Line))
		}
		if h.cfg.strictHostKeyChecking == "no" {
			h.warn(fmt.Sprintf("host key for %s has CHANGED: expected %s, got %s; connecting anyway (StrictHostKeyChecking no)",
				display, strings.Join(want, " or "), presented))
			return nil
		}
		return fmt.Errorf("%w: WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED for %s: known hosts expect %s but the host presented %s; someone may be intercepting the connection (man in the middle), or the host key was replaced; if the change is expected, remove the old key with: ssh-keygen -R '%s'",
			ErrHostKeyChanged, display, strings.Join(want, " or "), presented, display)
	}
	return fmt.Errorf("checking host key of %s: %w", display, err)
}

// remember appends key to the first UserKnownHostsFile, hashed when
// HashKnownHosts is set or the file already uses hashing.
func (h *hostKeyChecker) remember(key gossh.PublicKey) error {
	if len(h.cfg.userKnownHostsFiles) == 0 {
		return fmt.Errorf("cannot record host key: no UserKnownHostsFile")
	}
	path := h.cfg.userKnownHostsFiles[0]
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("recording host key: %w", err)
	}
	name := knownhosts.Normalize(h.name)
	if h.cfg.hashKnownHosts || usesHashing(path) {
		name = xknownhosts.HashHostname(name)
	}
	line := knownhosts.Line([]string{name}, key) + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("recording host key: %w", err)
	}
	// Start on a new line if the file does not end with one. The line goes
	// out in one append, as ssh writes it.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		if b, err := os.ReadFile(path); err == nil && b[len(b)-1] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("recording host key in %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("recording host key in %s: %w", path, err)
	}
	return nil
}

// usesHashing reports whether a known_hosts file holds hashed host names.
func usesHashing(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if bytes.HasPrefix(bytes.TrimSpace(sc.Bytes()), []byte("|1|")) {
			return true
		}
	}
	return false
}
