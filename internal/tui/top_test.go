package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/rivo/uniseg"

	"github.com/bgjob/bgjob/jobdir"
)

// Keys reach top's view by name, as tcell decoded them.
func TestTopKey(t *testing.T) {
	for _, tc := range []struct {
		ev   *tcell.EventKey
		want string
	}{
		{tcell.NewEventKey(tcell.KeyRune, 'j', tcell.ModNone), "j"},
		{tcell.NewEventKey(tcell.KeyRune, 'é', tcell.ModNone), "é"},
		{tcell.NewEventKey(tcell.KeyRune, '/', tcell.ModAlt), ""},
		{tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone), keyDown},
		{tcell.NewEventKey(tcell.KeyUp, 0, tcell.ModNone), keyUp},
		{tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone), keyEnter},
		{tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone), keyEsc},
		{tcell.NewEventKey(tcell.KeyBackspace2, 0, tcell.ModNone), keyBackspace},
		{tcell.NewEventKey(tcell.KeyCtrlC, 0, tcell.ModCtrl), keyCtrlC},
		{tcell.NewEventKey(tcell.KeyF1, 0, tcell.ModNone), ""},
	} {
		if got := topKey(tc.ev); got != tc.want {
			t.Errorf("topKey(%s) = %q, want %q", tc.ev.Name(), got, tc.want)
		}
	}
}

// The jobs top reads again on its tick are those that may change without
// a file event; it watches the files of those not ended.
func TestTopLive(t *testing.T) {
	jobs := []jobdir.Job{
		{Meta: jobdir.Meta{ID: "run"}, Status: jobdir.StatusRunning},
		{Meta: jobdir.Meta{ID: "queued"}, Status: jobdir.StatusQueued},
		{Meta: jobdir.Meta{ID: "done"}, Status: jobdir.StatusExited},
		{Meta: jobdir.Meta{ID: "leftovers"}, Status: jobdir.StatusExited, LiveProcesses: 2},
		{Meta: jobdir.Meta{ID: "new"}, Status: jobdir.StatusUnreadable},
	}
	ids := func(jobs []jobdir.Job) []string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.ID)
		}
		return s
	}
	if d := cmp.Diff([]string{"run", "queued", "leftovers"}, ids(live(jobs))); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
	u, key := unended(jobs)
	if d := cmp.Diff([]string{"run", "queued", "new"}, ids(u)); d != "" || key != "run queued new" {
		t.Errorf("unended (-want +got):\n%s\nkey %q", d, key)
	}
}

// a asks to attach to the selected job.
func TestTopKeyAttach(t *testing.T) {
	v := &topView{jobs: []jobdir.Job{{Meta: jobdir.Meta{ID: "one"}}, {Meta: jobdir.Meta{ID: "two"}}}}
	v.key("j")
	if got := v.key("a"); got != (topAction{kind: actAttach, id: "two"}) {
		t.Errorf("a on the second job: %+v", got)
	}
	if got := (&topView{}).key("a"); got.kind != actNone {
		t.Errorf("a with no job: %+v", got)
	}
}

// Wide characters (CJK, two cells each) and control characters keep the
// table's columns in place and each line within the screen's width.
func TestTopRenderWidth(t *testing.T) {
	wide := strings.Repeat("日本語", 40)
	v := &topView{color: true, jobs: []jobdir.Job{
		{Meta: jobdir.Meta{ID: "20261204T010000-aaaaaa", Name: "plain", Command: "sleep 600"}, Status: jobdir.StatusRunning},
		{Meta: jobdir.Meta{ID: "20261204T010000-bbbbbb", Name: "wide", Command: "echo " + wide + "\x1b[31m"}, Status: jobdir.StatusRunning},
		{Meta: jobdir.Meta{ID: "20261204T010000-cccccc", Name: "日本語の仕事です", Command: "true"}, Status: jobdir.StatusRunning},
	}, err: errors.New("an error\nof two lines")}
	const w, h = 80, 10
	lines := v.render(w, h, time.Now())
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	s := tcell.NewSimulationScreen("UTF-8")
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	defer s.Fini()
	s.SetSize(w, h)
	drawTop(s, lines)
	cells, sw, _ := s.GetContents()
	// cellsAt returns the text of the cells from x to x+n-1 on row y.
	cellsAt := func(x, y, n int) string {
		var b strings.Builder
		for _, c := range cells[y*sw+x : y*sw+x+n] {
			b.WriteString(string(c.Runes))
		}
		return b.String()
	}
	for i, l := range lines {
		if n := uniseg.StringWidth(l.text()); n > w {
			t.Errorf("line %d takes %d cells, more than %d: %q", i, n, w, l.text())
		}
		if strings.ContainsAny(l.text(), "\x1b\n") {
			t.Errorf("line %d holds a control character: %q", i, l.text())
		}
	}
	// The STATUS column starts in the same cell on each row, and the
	// name cut to its 12 cells ends in "…".
	col := 12 + 1 + 22 + 1
	for y := 2; y <= 4; y++ {
		if got := cellsAt(col, y, 7); got != "running" {
			t.Errorf("row %d: %q where the status is, want running\n%s", y, got, lines[y].text())
		}
	}
	if got := lines[4].text(); !strings.HasPrefix(got, "日本語の仕… ") {
		t.Errorf("the wide name is not cut to 12 cells: %q", got)
	}
	if got := lines[h-1].text(); got != "error: an error of two lines" {
		t.Errorf("the prompt line is %q", got)
	}
}

// Locally top's tick reads the jobs that may change without a file event
// again only when it must: a running job whose wrapper may have ended (its
// end), a queued job, or, for their processes, once a scan period has
// passed; a quiet running job between scans costs no read.
func TestTopTickReads(t *testing.T) {
	running := jobdir.Job{Meta: jobdir.Meta{ID: "run"}, Status: jobdir.StatusRunning}
	queued := jobdir.Job{Meta: jobdir.Meta{ID: "queued"}, Status: jobdir.StatusQueued}
	leftovers := jobdir.Job{Meta: jobdir.Meta{ID: "leftovers"}, Status: jobdir.StatusExited, LiveProcesses: 2}
	const every = 10 * time.Second
	for _, tc := range []struct {
		name      string
		jobs      []jobdir.Job
		sinceScan time.Duration
		ended     bool // what MayHaveEnded says
		want      bool
	}{
		{"nothing live", nil, time.Hour, true, false},
		{"running, quiet", []jobdir.Job{running}, time.Second, false, false},
		{"running, wrapper gone", []jobdir.Job{running}, time.Second, true, true},
		{"running, scan due", []jobdir.Job{running}, every, false, true},
		{"queued", []jobdir.Job{queued}, 0, false, true},
		{"leftovers between scans", []jobdir.Job{leftovers}, time.Second, true, false},
		{"leftovers, scan due", []jobdir.Job{leftovers}, every, false, true},
		{"leftovers and running, wrapper gone", []jobdir.Job{leftovers, running}, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			got := tickReads(tc.jobs, tc.sinceScan, every, func(jobs []jobdir.Job) bool {
				for _, j := range jobs {
					asked = append(asked, j.ID)
				}
				return tc.ended
			})
			if got != tc.want {
				t.Errorf("tickReads = %v, want %v", got, tc.want)
			}
			for _, id := range asked {
				if id != "run" {
					t.Errorf("MayHaveEnded was asked of %s, not running", id)
				}
			}
		})
	}
}

// The PORTS column shows the ports a job listens on, each number once,
// while a job listens on one; LABELS shows a job's labels while one has
// labels and the command keeps its room; the filter matches labels; the
// output of a job says its ports and labels in full.
func TestTopRenderPortsLabels(t *testing.T) {
	server := jobdir.Job{Meta: jobdir.Meta{ID: "20261207T010000-aaaaaa", Name: "web", Command: "python3 -m http.server"},
		Status: jobdir.StatusRunning, LiveProcesses: 1,
		Ports: []jobdir.Port{{Port: 8000, Proto: "tcp", Address: "0.0.0.0"}, {Port: 8000, Proto: "tcp", Address: "::"}, {Port: 9229, Proto: "tcp", Address: "127.0.0.1"}}}
	quiet := jobdir.Job{Meta: jobdir.Meta{ID: "20261207T010000-bbbbbb", Name: "quiet", Command: "sleep 600"}, Status: jobdir.StatusRunning, LiveProcesses: 1}
	lines := func(v *topView, w int) []string {
		var s []string
		for _, l := range v.render(w, 10, time.Now()) {
			s = append(s, l.text())
		}
		return s
	}
	row := func(v *topView, w int, name string) []string {
		for _, l := range lines(v, w) {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return f
			}
		}
		return nil
	}
	header := func(v *topView, w int) string { return strings.Join(strings.Fields(lines(v, w)[1]), " ") }

	v := &topView{jobs: []jobdir.Job{quiet}}
	if got, want := header(v, 120), "NAME ID STATUS EXIT PROCS DURATION COMMAND"; got != want {
		t.Errorf("titles without ports or labels: %q, want %q", got, want)
	}
	v = &topView{jobs: []jobdir.Job{server, quiet}}
	if got, want := header(v, 120), "NAME ID STATUS EXIT PROCS PORTS DURATION COMMAND"; got != want {
		t.Errorf("titles with ports: %q, want %q", got, want)
	}
	if got := row(v, 120, "web"); len(got) < 6 || got[5] != "8000,9229" {
		t.Errorf("the server's row: %q, want PORTS 8000,9229", got)
	}
	if got := row(v, 120, "quiet"); len(got) < 6 || got[5] != "-" {
		t.Errorf("the quiet job's row: %q, want PORTS -", got)
	}

	server.Labels = map[string]string{"agent": "b", "app": "web"}
	v = &topView{jobs: []jobdir.Job{server, quiet}}
	if got, want := header(v, 120), "NAME ID STATUS EXIT PROCS PORTS DURATION LABELS COMMAND"; got != want {
		t.Errorf("titles with labels: %q, want %q", got, want)
	}
	if got := row(v, 120, "web"); len(got) < 8 || got[7] != "agent=b,app=web" || got[8] != "python3" {
		t.Errorf("the server's row: %q, want LABELS agent=b,app=web, then the command", got)
	}
	if got := row(v, 120, "quiet"); len(got) < 8 || got[7] != "-" {
		t.Errorf("the quiet job's row: %q, want LABELS -", got)
	}
	if got := header(v, 80); strings.Contains(got, "LABELS") {
		t.Errorf("titles 80 cells wide: %q, want no LABELS (labels give way to the command)", got)
	}
	v.filter = "app=web"
	if got := v.visible(); len(got) != 1 || got[0].Name != "web" {
		t.Errorf("the filter app=web keeps %d jobs, want the server", len(got))
	}
	v.filter = ""
	v.showing = server.ID
	if got, want := lines(v, 120)[1], "ports: 8000/tcp (0.0.0.0), 8000/tcp (::), 9229/tcp (127.0.0.1)  labels: agent=b, app=web"; got != want {
		t.Errorf("the line above the server's output: %q, want %q", got, want)
	}
	v.showing = quiet.ID
	if got := lines(v, 120)[1]; got != "" {
		t.Errorf("the line above the quiet job's output: %q, want its output (none)", got)
	}
}

// A read that did not look up ports keeps those shown for the jobs that
// still have live processes.
func TestTopKeepPorts(t *testing.T) {
	p := []jobdir.Port{{Port: 8000, Proto: "tcp", Address: "0.0.0.0"}}
	shown := []jobdir.Job{
		{Meta: jobdir.Meta{ID: "live"}, LiveProcesses: 1, Ports: p},
		{Meta: jobdir.Meta{ID: "gone"}, LiveProcesses: 1, Ports: p},
	}
	read := []jobdir.Job{
		{Meta: jobdir.Meta{ID: "live"}, LiveProcesses: 2},
		{Meta: jobdir.Meta{ID: "gone"}, Status: jobdir.StatusExited},
		{Meta: jobdir.Meta{ID: "new"}, LiveProcesses: 1},
	}
	keepPorts(read, shown)
	if d := cmp.Diff(p, read[0].Ports); d != "" {
		t.Errorf("the live job's ports (-want +got):\n%s", d)
	}
	if read[1].Ports != nil || read[2].Ports != nil {
		t.Errorf("ports kept for a job without processes or not shown: %v, %v", read[1].Ports, read[2].Ports)
	}
}
