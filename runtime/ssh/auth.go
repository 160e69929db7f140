package ssh

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/term"
)

// auth gathers the keys offered to one host: agent keys first, then
// identity files, each preceded by its certificates, all in one
// PublicKeysCallback because x/crypto tries only the first method of a type.
type auth struct {
	cfg        *hostConfig
	passphrase func(keyFile string) ([]byte, error)
	// unlock runs asking for a key's passphrase and decrypting the key
	// (bcrypt, slow by design); the dialer pauses its deadline around it.
	// Nil runs it as it is.
	unlock func(func())

	agentConn    net.Conn
	needPass     []string // encrypted key files skipped for want of a passphrase
	offered      int
	problems     []string // unreadable keys and agent trouble, for the failure message
	signersBuilt bool
	signers      []gossh.Signer
}

func (a *auth) method() gossh.AuthMethod {
	return gossh.PublicKeysCallback(func() ([]gossh.Signer, error) {
		if !a.signersBuilt {
			a.signers = a.build()
			a.signersBuilt = true
			a.offered = len(a.signers)
		}
		return a.signers, nil
	})
}

func (a *auth) close() {
	if a.agentConn != nil {
		a.agentConn.Close()
	}
}

// identity is one IdentityFile: its public key (when known without a
// passphrase) and its signer (when it could be loaded).
type identity struct {
	path      string
	pub       gossh.PublicKey
	signer    gossh.Signer
	encrypted bool
}

// build returns the signers to offer, in order: the agent's keys (only
// those of the identity files and certificates under IdentitiesOnly),
// then the identity files' keys (an encrypted one only when the agent
// does not hold it), each key preceded by its certificates and offered
// once.
func (a *auth) build() []gossh.Signer {
	ids := a.loadIdentities()
	certs := a.loadCertificates(ids)
	agentSigners := a.agentSigners()

	o := offer{certs: certs, seen: map[string]bool{}}
	inAgent := map[string]bool{}
	for _, s := range agentSigners {
		key := s.PublicKey()
		if c, ok := key.(*gossh.Certificate); ok {
			key = c.Key
		}
		inAgent[string(key.Marshal())] = true
		if a.cfg.identitiesOnly && !matchesIdentity(key, ids, certs) {
			continue
		}
		o.withCerts(s)
	}
	for _, id := range ids {
		if s := a.identitySigner(id, inAgent); s != nil {
			o.withCerts(s)
		}
	}
	return o.signers
}

// agentSigners returns the keys of the agent IdentityAgent names, none
// when there is none or it fails (a problem then).
func (a *auth) agentSigners() []gossh.Signer {
	sock := a.agentSocket()
	if sock == "" {
		return nil
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		a.problems = append(a.problems, fmt.Sprintf("ssh-agent at %s: %v", sock, err))
		return nil
	}
	a.agentConn = conn
	s, err := agent.NewClient(conn).Signers()
	if err != nil {
		a.problems = append(a.problems, fmt.Sprintf("ssh-agent: %v", err))
	}
	return s
}

// identitySigner returns the signer of identity file id, decrypting an
// encrypted key with a passphrase unless the agent already offers it
// (inAgent holds the agent's public keys). It returns nil for a key that
// is not to be offered: unreadable, in the agent, or locked without a
// passphrase (needPass then).
func (a *auth) identitySigner(id identity, inAgent map[string]bool) gossh.Signer {
	if id.signer != nil {
		return id.signer
	}
	if !id.encrypted || (id.pub != nil && inAgent[string(id.pub.Marshal())]) {
		return nil // unreadable, or the agent already offers it
	}
	if a.passphrase == nil {
		a.needPass = append(a.needPass, id.path)
		return nil
	}
	return a.decrypt(id.path)
}

// decrypt asks for the passphrase of the encrypted key file path and
// returns its signer, or nil when that fails (a problem then).
func (a *auth) decrypt(path string) gossh.Signer {
	var s gossh.Signer
	var perr, err error
	unlock := a.unlock
	if unlock == nil {
		unlock = func(f func()) { f() }
	}
	unlock(func() {
		var pass []byte
		if pass, perr = a.passphrase(path); perr != nil {
			return
		}
		b, _ := os.ReadFile(path)
		s, err = gossh.ParsePrivateKeyWithPassphrase(b, pass)
	})
	if perr != nil {
		a.problems = append(a.problems, fmt.Sprintf("%s: reading passphrase: %v", path, perr))
		a.needPass = append(a.needPass, path)
		return nil
	}
	if err != nil {
		a.problems = append(a.problems, fmt.Sprintf("%s: %v", path, err))
		return nil
	}
	return s
}

// offer is the list of signers build offers, each key once, each preceded
// by the certificates for it.
type offer struct {
	certs   []*gossh.Certificate
	seen    map[string]bool
	signers []gossh.Signer
}

// add offers s unless its key is offered already.
func (o *offer) add(s gossh.Signer) {
	k := string(s.PublicKey().Marshal())
	if !o.seen[k] {
		o.seen[k] = true
		o.signers = append(o.signers, s)
	}
}

// withCerts offers s, after a signer for each certificate of its key (a
// plain key, not itself a certificate).
func (o *offer) withCerts(s gossh.Signer) {
	if _, isCert := s.PublicKey().(*gossh.Certificate); !isCert {
		for _, c := range o.certs {
			if bytes.Equal(c.Key.Marshal(), s.PublicKey().Marshal()) {
				if cs, err := gossh.NewCertSigner(c, s); err == nil {
					o.add(cs)
				}
			}
		}
	}
	o.add(s)
}

func (a *auth) agentSocket() string {
	switch a.cfg.identityAgent {
	case "none":
		return ""
	case "":
		return os.Getenv("SSH_AUTH_SOCK")
	}
	return a.cfg.identityAgent
}

// loadIdentities reads the identity files that exist. ssh -G lists the
// default keys when none are configured; missing ones are skipped.
func (a *auth) loadIdentities() []identity {
	var ids []identity
	for _, path := range a.cfg.identityFiles {
		b, err := os.ReadFile(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				a.problems = append(a.problems, err.Error())
			}
			continue
		}
		id := identity{path: path}
		s, err := gossh.ParsePrivateKey(b)
		var missing *gossh.PassphraseMissingError
		switch {
		case err == nil:
			id.signer, id.pub = s, s.PublicKey()
		case errors.As(err, &missing):
			id.encrypted, id.pub = true, missing.PublicKey
			if id.pub == nil {
				id.pub = readPublicKey(path + ".pub")
			}
		default:
			a.problems = append(a.problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// loadCertificates reads CertificateFile entries and KEY-cert.pub files
// next to identity files.
func (a *auth) loadCertificates(ids []identity) []*gossh.Certificate {
	paths := append([]string{}, a.cfg.certificateFiles...)
	for _, id := range ids {
		paths = append(paths, id.path+"-cert.pub")
	}
	var certs []*gossh.Certificate
	for _, p := range paths {
		if c, ok := readPublicKey(p).(*gossh.Certificate); ok {
			certs = append(certs, c)
		}
	}
	return certs
}

func readPublicKey(path string) gossh.PublicKey {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	k, _, _, _, err := gossh.ParseAuthorizedKey(b)
	if err != nil {
		return nil
	}
	return k
}

// matchesIdentity reports whether an agent key belongs to a configured
// identity file or certificate (IdentitiesOnly).
func matchesIdentity(key gossh.PublicKey, ids []identity, certs []*gossh.Certificate) bool {
	m := key.Marshal()
	for _, id := range ids {
		if id.pub != nil && bytes.Equal(id.pub.Marshal(), m) {
			return true
		}
	}
	for _, c := range certs {
		if bytes.Equal(c.Key.Marshal(), m) {
			return true
		}
	}
	return false
}

// explain adds what auth knows to an authentication failure.
func (a *auth) explain(err error) error {
	var notes []string
	for _, p := range a.needPass {
		notes = append(notes, fmt.Sprintf("key %s needs a passphrase: add it to ssh-agent (ssh-add %s) or run from a terminal", p, p))
	}
	notes = append(notes, a.problems...)
	if a.signersBuilt && a.offered == 0 && len(a.needPass) == 0 {
		notes = append(notes, "no usable key: none of the identity files exist and no ssh-agent key applies")
	}
	if len(notes) == 0 {
		return fmt.Errorf("authenticating as %s: %w", a.cfg.user, err)
	}
	return fmt.Errorf("authenticating as %s: %w; %s", a.cfg.user, err, strings.Join(notes, "; "))
}

// TerminalPassphrase returns a passphrase prompt for Options.Passphrase that
// writes the prompt to w and reads from the terminal tty without echo, or
// nil when tty is not a terminal (then encrypted keys not in ssh-agent are
// skipped). It is the caller's explicit choice of terminal: nothing else in
// the package reads or writes one.
func TerminalPassphrase(tty *os.File, w io.Writer) func(keyFile string) ([]byte, error) {
	if tty == nil || !term.IsTerminal(int(tty.Fd())) {
		return nil
	}
	return func(keyFile string) ([]byte, error) {
		fmt.Fprintf(w, "Enter passphrase for key '%s': ", keyFile)
		b, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(w)
		return b, err
	}
}
