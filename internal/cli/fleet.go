package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/via"
)

// hostNames are the hosts a list of -H names, comma-separated ("a, b"),
// blanks skipped.
func hostNames(list string) []string {
	var hosts []string
	for _, h := range strings.Split(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// setHosts reads the -H values: each is a host, a comma list, or @FILE
// (one host or comma list a line, # comments). With one host bgjob works
// as it always has; with several, every verb runs on all of them, once on
// each distinct host (see distinctHosts).
func (a *app) setHosts(ctx context.Context) error {
	if a.parallel < 1 {
		return usageError("--parallel must be at least 1")
	}
	var hosts []string
	seen := map[string]bool{}
	add := func(list string) (n int) {
		for _, h := range hostNames(list) {
			n++
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
		return n
	}
	for _, arg := range a.hostArgs {
		file, ok := strings.CutPrefix(arg, "@")
		if !ok {
			add(arg)
			continue
		}
		b, err := readHosts(file)
		if err != nil {
			return err
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			n += add(line)
		}
		if n == 0 {
			return usageError("-H @%s: no hosts in the file", file)
		}
	}
	a.host, a.hosts, a.fanout = "", hosts, len(hosts) > 1
	switch {
	case len(hosts) == 1:
		a.host = hosts[0]
	case len(hosts) > 1:
		// Hosts report warnings concurrently.
		a.stderr = &syncWriter{w: a.stderr}
		a.prompts = &sharedPrompt{answers: map[string][]byte{}}
		if a.via == "" && full != nil {
			// A --via host is a name only its command resolves; in
			// bgjob, only a verb that reaches no host gets here.
			a.hosts = a.distinctHosts(ctx, hosts)
		}
	}
	return nil
}

// many reports whether bgjob works on several hosts: whether several were
// named, even if they turned out to be one, so that the output keeps the
// form asked for.
func (a *app) many() bool { return a.fanout }

// fleet returns the fleet of the -H hosts, or with one host (this machine
// when none is named) a fleet of one, each host's part of a call bounded
// by limit (0: none; see a.limit). Every verb goes through it; its printer
// adds the host where several were named (a.many).
func (a *app) fleet(limit time.Duration) *bgjob.Fleet {
	return a.fleetVia(limit, a.connect)
}

// fleetVia is a.fleet reaching each host with dial.
func (a *app) fleetVia(limit time.Duration, dial bgjob.DialFunc) *bgjob.Fleet {
	hosts := a.hosts
	if !a.many() {
		hosts = []string{a.host}
	}
	return bgjob.NewFleet(hosts, dial, a.parallel, bgjob.WithHostTimeout(limit))
}

// failures ends a verb: with several hosts, one line on stderr for each
// host that failed, and the exit status they call for; with one, the
// host's error as is, for Run to print.
func failures[T any](a *app, res []bgjob.Result[T]) error {
	if a.many() {
		return exitCode(hostFailures(a, res))
	}
	return a.alone(res[0].Err)
}

// alone is the error of a fleet of one: on a host named with -H, the line
// a fan-out prints for it, "HOST: reason" (hostReason), whatever the
// error; on this machine the error as is, one that did not answer in time
// said so: "no answer within 30s (--host-timeout)". It wraps err, for
// errors.Is and errors.As.
func (a *app) alone(err error) error {
	switch {
	case err == nil:
		return nil
	case a.host != "":
		return &hostLine{host: a.host, err: err}
	case errors.Is(err, bgjob.ErrNoAnswer):
		return fmt.Errorf("%w (--host-timeout)", err)
	}
	return err
}

// hostLine is the error of one host as its line says it: "HOST: reason".
type hostLine struct {
	host string
	err  error
}

func (e *hostLine) Error() string { return e.host + ": " + hostReason(e.host, e.err) }
func (e *hostLine) Unwrap() error { return e.err }

// hostName is host with several hosts, "" with one: the host that a line
// names.
func (a *app) hostName(host string) string {
	if a.many() {
		return host
	}
	return ""
}

// hostPrefix is what starts a line about host: "HOST\t" with several
// hosts, "" with one.
func (a *app) hostPrefix(host string) string {
	if a.many() {
		return host + "\t"
	}
	return ""
}

// syncWriter serialises writes from several hosts.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// sharedPrompt asks for each key file's passphrase once, one prompt at a
// time, whichever host needs it first; nil asks as the prompt given.
type sharedPrompt struct {
	mu      sync.Mutex
	answers map[string][]byte
}

func (p *sharedPrompt) wrap(ask func(string) ([]byte, error)) func(string) ([]byte, error) {
	if p == nil {
		return ask
	}
	return func(keyFile string) ([]byte, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if b, ok := p.answers[keyFile]; ok {
			return b, nil
		}
		b, err := ask(keyFile)
		if err == nil {
			p.answers[keyFile] = b
		}
		return b, err
	}
}

// prefixWriter passes on whole lines, each prefixed (unless prefix is
// ""), so that the lines of several hosts never mix; Close passes on an
// unterminated last line with a newline added.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	i := bytes.LastIndexByte(p.buf, '\n')
	if i < 0 {
		return len(b), nil
	}
	if err := p.emit(p.buf[:i+1]); err != nil {
		return 0, err
	}
	p.buf = append(p.buf[:0], p.buf[i+1:]...)
	return len(b), nil
}

func (p *prefixWriter) emit(lines []byte) error {
	var out bytes.Buffer
	for len(lines) > 0 {
		line := lines
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			line = lines[:i+1]
		}
		lines = lines[len(line):]
		out.WriteString(p.prefix)
		out.Write(line)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.w.Write(out.Bytes())
	return err
}

func (p *prefixWriter) Close() error {
	if len(p.buf) == 0 {
		return nil
	}
	err := p.emit(append(p.buf, '\n'))
	p.buf = nil
	return err
}

// hostJSON is the --json object of one host when bgjob works on several:
// what the host returned, or why it failed.
type hostJSON struct {
	Host string        `json:"host"`
	Job  *jobdir.Job   `json:"job,omitempty"`
	Jobs *[]jobdir.Job `json:"jobs,omitempty"`
	Logs *[]logChunk   `json:"logs,omitempty"`
	Next string        `json:"next_cursor,omitempty"`
	// run: the jobs of the name it replaced, or left running.
	Replaced []string `json:"replaced,omitempty"`
	Running  []string `json:"same_name_running,omitempty"`
	// prune: the jobs it kept, and those it stopped because their owner
	// is gone.
	Kept    *[]keptJSON   `json:"kept,omitempty"`
	Stopped *[]jobdir.Job `json:"stopped,omitempty"`
	Error   string        `json:"error,omitempty"`
	Kind    string        `json:"kind,omitempty"`
}

// hostReason is a host's error without the host's name, which the line
// gives first: without the fleet's (bgjob.Error) and, when the error says
// nothing more than it, the runtime's (runtimeReason).
func hostReason(host string, err error) string {
	var he *bgjob.Error
	if errors.As(err, &he) && he.Host == host {
		err = he.Err
	}
	if parts, ok := joinOf(err); ok {
		// Several errors (prune's orphan pass and its own, say): the
		// reason of each, once.
		var lines []string
		for _, e := range parts {
			if r := hostReason(host, e); !slices.Contains(lines, r) {
				lines = append(lines, r)
			}
		}
		return strings.Join(lines, "\n")
	}
	msg, ok := runtimeReason(host, err)
	if !ok {
		msg = err.Error()
	}
	if bgjob.KindOf(err) == bgjob.KindNoAnswer {
		msg += " (--host-timeout)"
	}
	return msg
}

// runtimeReason returns what the error of host's runtime says after the
// host it names first (a connection refused, a container not running, a
// script's exit), if err is one with nothing said around it; false
// otherwise.
func runtimeReason(host string, err error) (string, bool) {
	var (
		ve *via.Error
		vx *via.ExitError
		e  error
		h  string
		r  string
		ok bool
	)
	if full != nil {
		e, h, r, ok = full.TransportError(err)
	}
	switch {
	case ok:
	case errors.As(err, &ve):
		e, h, r = ve, ve.Host, ve.Err.Error()
	case errors.As(err, &vx):
		e, h, r = vx, vx.Host, vx.Reason()
	default:
		return "", false
	}
	if h != host || e.Error() != err.Error() {
		return "", false
	}
	return r, true
}

// hostFailures prints one line per failed host and returns the exit
// status they call for: 0 when none failed, 2 when a request was invalid,
// else 1.
func hostFailures[T any](a *app, res []bgjob.Result[T]) int {
	code := 0
	for _, r := range res {
		if r.Err == nil {
			continue
		}
		fmt.Fprintf(a.stderr, "bgjob: error: %s: %s\n", r.Host, hostReason(r.Host, r.Err))
		c := 1
		if errors.Is(r.Err, bgjob.ErrUsage) {
			c = 2
		}
		code = max(code, c)
	}
	return code
}

// exitCode turns a status into the command's error: nil for 0.
func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}

// jobsJSON prints the --json of a verb that returns jobs: with several
// hosts one object per host, its jobs and its error; with one the host's
// jobs as an array, if it returned any.
func jobsJSON(a *app, res []bgjob.Result[[]jobdir.Job]) error {
	if !a.many() {
		// None found is [] (stop --all with nothing to stop); a failed
		// call prints no jobs it did not find.
		if jobs := res[0].Value; jobs != nil || res[0].Err == nil {
			return printJSON(a.stdout, nonNil(jobs))
		}
		return nil
	}
	return jobsJSONWith(a, res, nil)
}

// jobsJSONWith is jobsJSON with more filled in for each host by add.
func jobsJSONWith(a *app, res []bgjob.Result[[]jobdir.Job], add func(*hostJSON)) error {
	return hostsJSON(a, res, func(h *hostJSON, r bgjob.Result[[]jobdir.Job]) {
		if r.Value != nil || r.Err == nil {
			jobs := nonNil(r.Value)
			h.Jobs = &jobs
		}
		if add != nil {
			add(h)
		}
	})
}

// hostsJSON prints the --json of several hosts: an object per host, with
// its error if it failed and what fill takes from its result.
func hostsJSON[T any](a *app, res []bgjob.Result[T], fill func(*hostJSON, bgjob.Result[T])) error {
	out := make([]hostJSON, len(res))
	for i, r := range res {
		out[i].Host = r.Host
		if r.Err != nil {
			out[i].Error, out[i].Kind = hostReason(r.Host, r.Err), errorKind(r.Err)
		}
		fill(&out[i], r)
	}
	return printJSON(a.stdout, out)
}

// maxHostsFile bounds what -H @FILE reads: a list of hosts, not /dev/zero
// or a pipe without end.
const maxHostsFile = 16 << 20

// readHosts reads the file of -H @FILE, at most maxHostsFile bytes.
func readHosts(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading hosts: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHostsFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading hosts: %w", err)
	}
	if len(b) > maxHostsFile {
		return nil, usageError("-H @%s: more than %d MiB: not a list of hosts", file, maxHostsFile>>20)
	}
	return b, nil
}
