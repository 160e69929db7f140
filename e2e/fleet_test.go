package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	bg "github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/sshtest"
	"github.com/bgjob/bgjob/jobdir"
)

// fleetHosts is the size of the simulated fleet; partHosts, of the part
// of it that the subtests about one verb's semantics run on (stop, names,
// slots, a host going down). Those need several hosts, not a hundred:
// on 100 they took four of TestFleet's seven minutes.
const (
	fleetHosts = 100
	partHosts  = 20
)

// fleetHost is one host's object in --json output with several hosts.
type fleetHost struct {
	Host  string       `json:"host"`
	Job   *jobdir.Job  `json:"job"`
	Jobs  []jobdir.Job `json:"jobs"`
	Error string       `json:"error"`
}

// TestFleet runs bgjob against 100 simulated hosts (sshd in their own
// pid, mount and UTS namespaces on 127.0.2.I, see sshtest.Fleet): the
// fan-out subtests on all of them, the others on the first 20. It is not
// parallel: the other tests wait until it is done, so that 100 hosts do
// not share the machine with them.
func TestFleet(t *testing.T) {
	f := sshtest.StartFleet(t, fleetHosts)
	dir := t.TempDir()
	// A hundred handshakes at once on a loaded 2-core machine take longer
	// than the default ConnectTimeout (10 s): every host answers here, so
	// the timeout only has to be generous.
	cfg, err := f.WriteClientConfig(dir, "ConnectTimeout 60")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	fl := newFleet(t, f.Hosts, cfg, filepath.Join(dir, "hosts"))
	part := newFleet(t, f.Hosts[:partHosts], cfg, filepath.Join(dir, "part"))

	t.Run("fan-out run, wait, logs", fl.fanOut)
	t.Run("pty, logs --plain", fl.ptyPlain)
	t.Run("exit status", fl.exitStatus)
	t.Run("ls -A", fl.listAll)
	t.Run("stop --all", part.stopAll)
	t.Run("same name, prune's kept", part.sameName)
	t.Run("slots", part.slots)
	t.Run("events", part.events)
	t.Run("host down", part.hostDown)
}

// newFleet returns the fleet of hosts, whose names it writes to file for
// -H @FILE.
func newFleet(t *testing.T, hosts []*sshtest.Host, cfg, file string) *fleet {
	fl := &fleet{cfg: cfg, hosts: hosts, file: file, ids: map[string]string{}}
	for _, h := range hosts {
		fl.names = append(fl.names, h.Name)
	}
	if err := os.WriteFile(file, []byte("# the fleet\n"+strings.Join(fl.names, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fl
}

// slots: run --slots 2 on every host gives each host its own two slots:
// of three jobs, the two that hold theirs run on every host and the third
// is queued there; once those are stopped, it runs.
func (fl *fleet) slots(t *testing.T) {
	const ws = "slots"
	var ids []string
	for _, cmd := range []string{"sleep 300", "sleep 300", "true"} {
		code, out, errs := fl.bgjob(t, ws, "run", "-q", "--slots", "2", "--", cmd)
		if code != 0 {
			t.Fatalf("run --slots 2: exit %d: %s", code, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	code, out, errs := fl.bgjob(t, ws, "status", "--json", ids[2])
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errs)
	}
	for _, h := range fl.hostJSON(t, out) {
		if len(h.Jobs) != 1 || h.Jobs[0].Status != jobdir.StatusQueued {
			t.Errorf("%s: the third job of two slots is %+v, want queued", h.Host, h.Jobs)
		}
	}
	if code, _, errs := fl.bgjob(t, ws, "stop", "--grace", "0", ids[0], ids[1]); code != 0 {
		t.Fatalf("stop: exit %d: %s", code, errs)
	}
	if code, _, errs := fl.bgjob(t, ws, "wait", ids[2]); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errs)
	}
}

type fleet struct {
	cfg   string            // the client config naming every host
	hosts []*sshtest.Host   // the hosts bgjob is run on
	names []string          // their names, in order
	file  string            // the file of their names, for -H @FILE
	ids   map[string]string // workspace: the last job run there
}

// bgjob runs bgjob on the whole fleet in workspace ws, within two minutes.
// It works on 8 hosts at a time, not 32: the hosts share this machine's
// cores with the tests of other packages, whose handshakes must not starve.
func (fl *fleet) bgjob(t *testing.T, ws string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errs := bgjob(ctx, append([]string{"--ssh-config", fl.cfg, "-H", "@" + fl.file, "-w", ws, "--parallel", "8"}, args...)...)
	if ctx.Err() != nil {
		t.Fatalf("bgjob %s did not return within 2 minutes", strings.Join(args, " "))
	}
	return code, out, errs
}

// run starts cmd on every host and returns the job's one id.
func (fl *fleet) run(t *testing.T, ws string, cmd string) string {
	t.Helper()
	code, out, errs := fl.bgjob(t, ws, "run", "-q", "--", cmd)
	id := strings.TrimSpace(out)
	if code != 0 || !jobdir.IsID(id) {
		t.Fatalf("run: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	fl.ids[ws] = id
	return id
}

// hostJSON decodes --json output with one object per host and checks that
// every host of the fleet has one, in order.
func (fl *fleet) hostJSON(t *testing.T, out string) []fleetHost {
	t.Helper()
	var hs []fleetHost
	if err := json.Unmarshal([]byte(out), &hs); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	var names []string
	for _, h := range hs {
		names = append(names, h.Host)
	}
	if diff := cmp.Diff(fl.names, names); diff != "" {
		t.Fatalf("hosts in the JSON output (-want +got):\n%s", diff)
	}
	return hs
}

func (fl *fleet) fanOut(t *testing.T) {
	const ws = "fanout"
	id := fl.run(t, ws, `echo "line from $(hostname)"`)
	if code, _, errs := fl.bgjob(t, ws, "wait", id); code != 0 || errs != "" {
		t.Fatalf("wait: exit %d, stderr %q", code, errs)
	}
	code, out, errs := fl.bgjob(t, ws, "logs", id)
	if code != 0 || errs != "" {
		t.Fatalf("logs: exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(lines)
	var want []string
	for _, h := range fl.names {
		want = append(want, h+": line from "+h)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("logs: every host's line once, prefixed (-want +got):\n%s", diff)
	}
	code, out, _ = fl.bgjob(t, ws, "logs", "--no-prefix", id)
	if n := strings.Count(out, "line from n"); code != 0 || n != len(fl.hosts) || strings.Contains(out, ": line") {
		t.Errorf("logs --no-prefix: exit %d, %d lines, want %d without prefix:\n%s", code, n, len(fl.hosts), out)
	}
	code, out, errs = fl.bgjob(t, ws, "status", "--json", id)
	if code != 0 {
		t.Fatalf("status: exit %d, %s", code, errs)
	}
	for _, h := range fl.hostJSON(t, out) {
		if len(h.Jobs) != 1 || h.Jobs[0].ID != id || h.Jobs[0].Host != h.Host || h.Jobs[0].Status != jobdir.StatusExited {
			t.Errorf("%s: status %+v, want job %s exited, on that host", h.Host, h.Jobs, id)
		}
	}
}

// events: a follow of the events of a job run on every host, until
// every host's has ended, gets each host's started and ended events once,
// each naming its host, the text a HOST column. Each host followed holds
// one watch script (watch.sh, the one that sets bg_wlive) while its job
// runs, never more.
func (fl *fleet) events(t *testing.T) {
	const ws = "events"
	id := fl.run(t, ws, `while [ ! -e "$BGJOB_JOB_DIR/go" ]; do sleep 0.1; done; exit 4`)
	code, out, errs := fl.bgjob(t, ws, "status", "--json", id)
	if code != 0 {
		t.Fatalf("status: exit %d, %s", code, errs)
	}
	dirs := map[string]string{}
	for _, h := range fl.hostJSON(t, out) {
		if len(h.Jobs) == 1 {
			dirs[h.Host] = h.Jobs[0].Dir
		}
	}
	type result struct {
		code      int
		out, errs string
	}
	followed := make(chan result, 1)
	go func() {
		code, out, errs := fl.bgjob(t, ws, "events", "--follow", "--until-done", "--json", id)
		followed <- result{code, out, errs}
	}()
	// watches counts the watch scripts of each host (the processes of
	// the script whose parent is not one: its subshells have its command
	// line), and the hosts with one.
	watches := func() (most, holding int) {
		for _, h := range fl.hosts {
			script := map[int]bool{}
			for pid, cmd := range h.Procs() {
				script[pid] = strings.Contains(cmd, "\nbg_wlive=")
			}
			n := 0
			for pid, ok := range script {
				if ok && !script[parentPID(pid)] {
					n++
				}
			}
			most = max(most, n)
			if n > 0 {
				holding++
			}
		}
		return most, holding
	}
	// A fan-out follows 8 hosts at a time (--parallel): the others once
	// those have ended.
	if !eventually(time.Minute, func() bool { _, n := watches(); return n >= min(8, len(fl.hosts)) }) {
		_, n := watches()
		t.Errorf("%d hosts hold a watch, want %d", n, min(8, len(fl.hosts)))
	}
	if most, _ := watches(); most != 1 {
		t.Errorf("a host holds %d watches, want one", most)
	}
	for _, h := range fl.hosts {
		if err := os.WriteFile(h.Root()+dirs[h.Name]+"/go", nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := <-followed
	code, out, errs = r.code, r.out, r.errs
	if code != 0 {
		t.Fatalf("events: exit %d, stderr %q", code, errs)
	}
	var got []string
	for line := range strings.Lines(out) {
		var e bg.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events: %v: %q", err, line)
		}
		if e.ID != id {
			t.Errorf("events: a line of job %s, want %s", e.ID, id)
		}
		if e.Event == bg.EventEnded && (e.ExitCode == nil || *e.ExitCode != 4) {
			t.Errorf("events: %s ended with %v, want exit code 4", e.Host, e.ExitCode)
		}
		got = append(got, e.Host+" "+e.Event)
	}
	sort.Strings(got)
	var want []string
	for _, h := range fl.names {
		want = append(want, h+" ended", h+" started")
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events: each host's once (-want +got):\n%s", diff)
	}
	code, out, _ = fl.bgjob(t, ws, "events", id)
	if n := strings.Count(out, "\n"); code != 0 || n != 2*len(fl.names) || !strings.HasPrefix(out, fl.names[0]+"\t") && !strings.Contains(out, "\n"+fl.names[0]+"\t") {
		t.Errorf("events: exit %d, %d lines, want %d with a HOST column:\n%s", code, n, 2*len(fl.names), out)
	}
}

// ptyPlain: a PTY job on every host; logs --plain strips each host's
// escapes and line ends before the lines get their "HOST: " prefix.
func (fl *fleet) ptyPlain(t *testing.T) {
	const ws = "pty"
	code, out, errs := fl.bgjob(t, ws, "run", "-q", "--pty", "--", `test -t 1 && printf '\033[1m%s\033[0m\n' "$(hostname)"`)
	id := strings.TrimSpace(out)
	if code != 0 || !jobdir.IsID(id) {
		t.Fatalf("run --pty: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	if code, _, errs := fl.bgjob(t, ws, "wait", id); code != 0 {
		t.Fatalf("wait: exit %d, stderr %q", code, errs)
	}
	code, out, errs = fl.bgjob(t, ws, "logs", "--plain", id)
	if code != 0 || errs != "" {
		t.Fatalf("logs --plain: exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(lines)
	var want []string
	for _, h := range fl.names {
		want = append(want, h+": "+h)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("logs --plain: every host's name once, prefixed, as text (-want +got):\n%s", diff)
	}
}

func (fl *fleet) exitStatus(t *testing.T) {
	const ws = "status"
	// Host nI exits I%7: the largest status is 6.
	id := fl.run(t, ws, `exit $(( $(hostname | tr -d n) % 7 ))`)
	code, _, errs := fl.bgjob(t, ws, "wait", id)
	if code != 6 {
		t.Errorf("wait: exit %d, want the largest status, 6: %s", code, errs)
	}
	re := regexp.MustCompile(`(?m)^bgjob: error: n(\d+): job ` + id + ` exited with status (\d+)$`)
	got := map[int]int{}
	for _, m := range re.FindAllStringSubmatch(errs, -1) {
		i, _ := strconv.Atoi(m[1])
		got[i], _ = strconv.Atoi(m[2])
	}
	want := map[int]int{}
	for i := 1; i <= len(fl.hosts); i++ {
		if i%7 != 0 {
			want[i] = i % 7
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wait: one line per host whose job failed (-want +got):\n%s\nstderr:\n%s", diff, errs)
	}
	if n := strings.Count(errs, "\n"); n != len(want) {
		t.Errorf("wait: %d lines on stderr, want %d", n, len(want))
	}

}

// listAll lists the jobs the two subtests before it started, one in each
// of two workspaces.
func (fl *fleet) listAll(t *testing.T) {
	a, b := fl.ids["fanout"], fl.ids["status"]
	if a == "" || b == "" {
		t.Fatalf("the subtests before this one started no jobs: %v", fl.ids)
	}
	code, out, errs := fl.bgjob(t, "fanout", "ls", "-A", "--json")
	if code != 0 {
		t.Fatalf("ls -A: exit %d: %s", code, errs)
	}
	for _, h := range fl.hostJSON(t, out) {
		ws := map[string]string{}
		for _, j := range h.Jobs {
			if j.Host != h.Host {
				t.Errorf("%s: job %s reports host %q", h.Host, j.ID, j.Host)
			}
			ws[j.ID] = j.Workspace
		}
		if ws[a] != "fanout" || ws[b] != "status" {
			t.Errorf("%s: ls -A lists %v, want %s in fanout and %s in status", h.Host, ws, a, b)
		}
	}
	code, out, _ = fl.bgjob(t, "fanout", "ls", "-A")
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || !strings.HasPrefix(rows[0], "HOST  ID  ") || !strings.Contains(rows[0], "WORKSPACE") {
		t.Fatalf("ls -A: exit %d, header %q, want HOST, ID ... WORKSPACE", code, rows[0])
	}
	for _, h := range fl.names {
		for _, id := range []string{a, b} {
			n := 0
			for _, r := range rows[1:] {
				if f := strings.Fields(r); len(f) > 1 && f[0] == h && f[1] == id {
					n++
				}
			}
			if n != 1 {
				t.Errorf("ls -A table: %d rows for %s on %s, want 1", n, id, h)
			}
		}
	}
}

func (fl *fleet) stopAll(t *testing.T) {
	const ws = "stopall"
	id := fl.run(t, ws, "sleep 300")
	fl.run(t, ws, "sleep 300 & sleep 301; wait")
	for _, h := range fl.hosts {
		if !eventually(10*time.Second, func() bool { return sleeps(h) == 3 }) {
			t.Fatalf("%s: %d sleep processes, want 3 before stop: %v", h.Name, sleeps(h), h.Procs())
		}
	}
	if code, _, errs := fl.bgjob(t, ws, "wait", "--timeout", "1s", id); code != 124 || strings.Count(errs, "timed out") != len(fl.hosts) {
		t.Errorf("wait --timeout 1s: exit %d, want 124 and one timeout per host:\n%s", code, errs)
	}
	code, out, errs := fl.bgjob(t, ws, "stop", "--all")
	if code != 0 {
		t.Fatalf("stop --all: exit %d: %s", code, errs)
	}
	if code, _, errs := fl.bgjob(t, ws, "wait", id); code != 143 {
		t.Errorf("wait after stop: exit %d, want 143 (TERM): %s", code, errs)
	}
	if n := strings.Count(out, "\tkilled (stop)\t143\n"); n != 2*len(fl.hosts) {
		t.Errorf("stop --all: %d jobs killed, want %d:\n%s", n, 2*len(fl.hosts), out)
	}
	// Nothing is left on any host but its sshd: no job, wrapper, timer or
	// script.
	for _, h := range fl.hosts {
		if !eventually(15*time.Second, func() bool { return len(h.Procs()) == 0 }) {
			t.Errorf("%s: processes left after stop --all: %v", h.Name, h.Procs())
		}
	}
}

// sameName: on every host, a second job of a running name warns (one
// line per host), run --replace stops both and reports them per host in
// --json, and prune --json says per host which job it kept.
func (fl *fleet) sameName(t *testing.T) {
	const ws = "names"
	if code, _, errs := fl.bgjob(t, ws, "run", "-q", "-n", "web", "--", "sleep 300"); code != 0 || errs != "" {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	code, _, errs := fl.bgjob(t, ws, "run", "-q", "-n", "web", "--", "sleep 300")
	warn := regexp.MustCompile(`(?m)^bgjob: warning: n\d+: job \S+ named web is still running`)
	if code != 0 || len(warn.FindAllString(errs, -1)) != len(fl.hosts) {
		t.Fatalf("second run: exit %d, want 0 and one warning per host:\n%s", code, errs)
	}
	code, out, errs := fl.bgjob(t, ws, "run", "--json", "-n", "web", "--replace", "--grace", "200ms", "--", "sleep 301 & exit 0")
	if code != 0 || errs != "" {
		t.Fatalf("run --replace: exit %d: %s", code, errs)
	}
	var runs []struct {
		fleetHost
		Replaced []string `json:"replaced"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != len(fl.hosts) {
		t.Fatalf("run --replace --json: %v: %s", err, out)
	}
	for _, r := range runs {
		if r.Job == nil || len(r.Replaced) != 2 {
			t.Errorf("%s: run --replace replaced %v, want the two jobs named web", r.Host, r.Replaced)
		}
	}
	code, out, errs = fl.bgjob(t, ws, "prune", "--json", "--all")
	var prunes []struct {
		fleetHost
		Kept []struct {
			ID            string `json:"id"`
			Reason        string `json:"reason"`
			LiveProcesses int    `json:"live_processes"`
		} `json:"kept"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &prunes) != nil || len(prunes) != len(fl.hosts) {
		t.Fatalf("prune --json: exit %d: %s %s", code, out, errs)
	}
	for i, p := range prunes {
		if len(p.Jobs) != 2 || len(p.Kept) != 1 || p.Kept[0].ID != runs[i].Job.ID || p.Kept[0].Reason != "live_processes" || p.Kept[0].LiveProcesses != 1 {
			t.Errorf("%s: prune removed %d jobs and kept %+v; want the 2 replaced removed and %s kept, with 1 live process", p.Host, len(p.Jobs), p.Kept, runs[i].Job.ID)
		}
	}
	fl.bgjob(t, ws, "stop", "--all", "--grace", "0")
}

// sleeps counts the sleep processes of stopAll's jobs on h.
func sleeps(h *sshtest.Host) int {
	n := 0
	for _, cmd := range h.Procs() {
		if cmd == "sleep 300" || cmd == "sleep 301" {
			n++
		}
	}
	return n
}

func (fl *fleet) hostDown(t *testing.T) {
	const ws = "down"
	// The job ends when the test creates /tmp/go on its host: a look a
	// second (a hundred jobs looking ten times a second were a thousand
	// forks a second beside the test).
	id := fl.run(t, ws, "while [ ! -e /tmp/go ]; do sleep 1; done")
	down := fl.hosts[len(fl.hosts)/2]

	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		code, out, errs := bgjob(ctx, "--ssh-config", fl.cfg, "-H", "@"+fl.file, "-w", ws, "--parallel", "128", "wait", "--json", id)
		done <- result{code, out, errs}
	}()
	// The wait script on the host names the job in its text. Connecting
	// to a hundred hosts at once takes long on a loaded machine.
	var early *result
	waiting := func() bool {
		select {
		case r := <-done:
			early = &r
			return true
		default:
		}
		for _, cmd := range down.Procs() {
			if strings.HasPrefix(cmd, "sh -c ") && strings.Contains(cmd, id) {
				return true
			}
		}
		return false
	}
	if !eventually(90*time.Second, waiting) {
		t.Fatalf("no wait script ran on %s within 90 s", down.Name)
	}
	if early != nil {
		t.Fatalf("wait ended before its script ran on %s: exit %d: %s", down.Name, early.code, early.errs)
	}
	if err := down.Kill(); err != nil {
		t.Fatal(err)
	}
	defer down.Start()
	for _, h := range fl.hosts {
		if h != down {
			if err := os.WriteFile(filepath.Join(h.Root(), "tmp", "go"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("wait did not return within 2 minutes of a host going down")
	}
	if r.code != 1 {
		t.Errorf("wait with a host down: exit %d, want 1", r.code)
	}
	if lines := strings.Split(strings.TrimSuffix(r.errs, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "bgjob: error: "+down.Name+": ") {
		t.Errorf("wait stderr %q, want one line naming %s", r.errs, down.Name)
	}
	for _, h := range fl.hostJSON(t, r.out) {
		switch {
		case h.Host == down.Name:
			if h.Error == "" {
				t.Errorf("%s went down, but its JSON has no error: %+v", h.Host, h)
			}
		case h.Error != "" || len(h.Jobs) != 1 || h.Jobs[0].ExitCode == nil || *h.Jobs[0].ExitCode != 0:
			t.Errorf("%s: %+v, want its job exited 0", h.Host, h)
		}
	}

	// A host that is down refuses at once; one that answers TCP but never
	// speaks SSH fails after its ConnectTimeout. The others answer.
	hole, err := net.Listen("tcp", "127.0.3.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { // read what comes, say nothing
				defer conns.Done()
				io.Copy(io.Discard, c)
				c.Close()
			}()
		}
	}()
	cfg, err := os.ReadFile(fl.cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(hole.Addr().String())
	holeCfg := filepath.Join(t.TempDir(), "ssh_config")
	entry := fmt.Sprintf("Host hole\n  HostName 127.0.3.1\n  Port %s\n  ConnectTimeout 2\n", port)
	if err := os.WriteFile(holeCfg, append([]byte(entry), cfg...), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, out, errs := bgjob(ctx, "--ssh-config", holeCfg, "-H", "@"+fl.file, "-H", "n1,hole", "-w", ws, "status", "--json", id)
	if ctx.Err() != nil {
		t.Fatal("status with an unreachable host did not return within a minute")
	}
	if code != 1 || strings.Count(errs, "\n") != 2 ||
		!strings.Contains(errs, "bgjob: error: "+down.Name+": ") || !strings.Contains(errs, "refused") ||
		!strings.Contains(errs, "bgjob: error: hole: ") || !strings.Contains(errs, "ConnectTimeout") {
		t.Errorf("status: exit %d, stderr %q: want exit 1, %s refused and hole timed out", code, errs, down.Name)
	}
	var hs []fleetHost
	if err := json.Unmarshal([]byte(out), &hs); err != nil || len(hs) != len(fl.hosts)+1 {
		t.Fatalf("status --json: %d hosts, want %d: %v", len(hs), len(fl.hosts)+1, err)
	}
	for _, h := range hs {
		bad := h.Host == down.Name || h.Host == "hole"
		if bad != (h.Error != "") || !bad && (len(h.Jobs) != 1 || h.Jobs[0].Status != jobdir.StatusExited) {
			t.Errorf("%s: %+v", h.Host, h)
		}
	}
	hole.Close()
	conns.Wait()
}

// parentPID returns the parent of process pid (0 when it is gone).
func parentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
