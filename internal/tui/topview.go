package tui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"

	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

// The actions a key asks of top's loop.
const (
	actNone = iota
	actQuit
	actRead // read the jobs (and output) now
	actStop
	actKill
	actAttach
)

type topAction struct {
	kind int
	id   string
}

// topView is what top shows, and how keys change it: a pure model, drawn
// by render.
type topView struct {
	color, all bool
	jobs       []jobdir.Job
	err        error
	sel        int    // index into the filtered jobs
	selID      string // the selected job, kept as the table changes
	filter     string
	filtering  bool   // typing the filter
	confirm    string // "stop" or "kill": waiting for y or n
	confirmID  string
	showing    string // the job whose output is shown ("": the table)
	output     []byte
	help       bool
	note       string // one line said under the table
}

// visible returns the jobs the filter keeps.
func (v *topView) visible() []jobdir.Job {
	if v.filter == "" {
		return v.jobs
	}
	f := strings.ToLower(v.filter)
	var keep []jobdir.Job
	for _, j := range v.jobs {
		if strings.Contains(strings.ToLower(j.ID+"\x00"+j.Name+"\x00"+j.Command+"\x00"+labelsText(j.Labels, ",")), f) {
			keep = append(keep, j)
		}
	}
	return keep
}

// selected returns the selected job, placing the selection on the job it
// was on when the table has changed.
func (v *topView) selected() (jobdir.Job, bool) {
	jobs := v.visible()
	if len(jobs) == 0 {
		v.sel = 0
		return jobdir.Job{}, false
	}
	for i, j := range jobs {
		if j.ID == v.selID {
			v.sel = i
		}
	}
	v.sel = min(max(v.sel, 0), len(jobs)-1)
	v.selID = jobs[v.sel].ID
	return jobs[v.sel], true
}

// The names of the keys top's view knows besides the characters, each
// of which is its own name ("j", "/", "é"): see topKey.
const (
	keyUp        = "up"
	keyDown      = "down"
	keyEnter     = "enter"
	keyEsc       = "esc"
	keyBackspace = "backspace"
	keyCtrlC     = "ctrl-c"
)

// key handles one key, by its name: what it does depends on what is
// shown, or asked.
func (v *topView) key(s string) topAction {
	switch {
	case v.help:
		v.help = false
		return topAction{}
	case v.confirm != "":
		return v.confirmKey(s)
	case v.filtering:
		return v.filterKey(s)
	case v.showing != "":
		return v.outputKey(s)
	}
	return v.tableKey(s)
}

// confirmKey handles the answer to "stop job …? y/n": y sends it, any
// other key drops it.
func (v *topView) confirmKey(s string) topAction {
	act := topAction{kind: actStop, id: v.confirmID}
	if v.confirm == "kill" {
		act.kind = actKill
	}
	what := v.confirm
	v.confirm, v.confirmID = "", ""
	if s != "y" && s != "Y" {
		v.note = ""
		return topAction{}
	}
	v.note = what + " sent to " + act.id
	return act
}

// filterKey handles a key typed into the filter.
func (v *topView) filterKey(s string) topAction {
	switch {
	case s == keyEnter:
		v.filtering = false
	case s == keyEsc:
		v.filtering, v.filter = false, ""
	case s == keyBackspace:
		if v.filter != "" {
			_, n := utf8.DecodeLastRuneInString(v.filter)
			v.filter = v.filter[:len(v.filter)-n]
		}
	case s == keyCtrlC:
		return topAction{kind: actQuit}
	case utf8.RuneCountInString(s) == 1 && s >= " ":
		v.filter += s
	}
	return topAction{}
}

// outputKey handles a key while a job's output is shown.
func (v *topView) outputKey(s string) topAction {
	switch s {
	case keyEsc, "q":
		v.showing, v.output = "", nil
	case keyCtrlC:
		return topAction{kind: actQuit}
	}
	return topAction{}
}

// tableKey handles a key on the table.
func (v *topView) tableKey(s string) topAction {
	switch s {
	case "q", keyCtrlC:
		return topAction{kind: actQuit}
	case "j", keyDown:
		v.move(1)
	case "k", keyUp:
		v.move(-1)
	case "/":
		v.filtering, v.note = true, ""
	case "?":
		v.help = true
	case keyEnter, "a", "s", "K":
		return v.selectedKey(s)
	}
	return topAction{}
}

// selectedKey handles a key that acts on the selected job: enter shows
// its output, a attaches to it, s and K ask whether to stop or kill it.
// With no job in the table, none does anything.
func (v *topView) selectedKey(s string) topAction {
	j, ok := v.selected()
	if !ok {
		return topAction{}
	}
	switch s {
	case keyEnter:
		v.showing, v.output = j.ID, nil
		return topAction{kind: actRead}
	case "a":
		v.note = ""
		return topAction{kind: actAttach, id: j.ID}
	case "s":
		v.confirm, v.confirmID = "stop", j.ID
	case "K":
		v.confirm, v.confirmID = "kill", j.ID
	}
	return topAction{}
}

// move moves the selection by n rows, within the table.
func (v *topView) move(n int) {
	v.selected()
	v.sel += n
	v.selID = ""
	v.selectIndex()
}

// selectIndex keeps the selection in the table and records its job.
func (v *topView) selectIndex() {
	jobs := v.visible()
	if len(jobs) == 0 {
		return
	}
	v.sel = min(max(v.sel, 0), len(jobs)-1)
	v.selID = jobs[v.sel].ID
}

// topColumn is a column of the table: its title, its width in cells (0:
// the rest of the line), and a job's text in it; for a column shown only
// while a job has something for it, whether j has.
type topColumn struct {
	title string
	width int
	cell  func(j jobdir.Job, now time.Time) string
	has   func(j jobdir.Job) bool
}

// The table's columns: topColumns, and the optional ones before the
// command (optionalColumns), each with its widest width.
var (
	topColumns = []topColumn{
		{"NAME", 12, func(j jobdir.Job, _ time.Time) string { return or(j.Name, "-") }, nil},
		{"ID", 22, func(j jobdir.Job, _ time.Time) string { return j.ID }, nil},
		{"STATUS", 8, func(j jobdir.Job, _ time.Time) string { return string(j.Status) }, nil},
		{"EXIT", 4, func(j jobdir.Job, _ time.Time) string { return jobtext.Exit(j) }, nil},
		{"PROCS", 5, procsCell, nil},
		{"DURATION", 8, durationCell, nil},
		{"COMMAND", 0, func(j jobdir.Job, _ time.Time) string { return oneLine(j.Command) }, nil},
	}
	portsColumn = topColumn{"PORTS", 17,
		func(j jobdir.Job, _ time.Time) string { return or(portsText(j.Ports), "-") },
		func(j jobdir.Job) bool { return len(j.Ports) > 0 }}
	labelsColumn = topColumn{"LABELS", 24,
		func(j jobdir.Job, _ time.Time) string { return or(labelsText(j.Labels, ","), "-") },
		func(j jobdir.Job) bool { return len(j.Labels) > 0 }}
)

// statusColumn is the index of STATUS in topColumns, the cell coloured;
// PORTS comes after PROCS (portsAfter).
const (
	statusColumn = 2
	portsAfter   = 4
)

// topLeastCommand is the least width in cells the COMMAND column keeps
// when LABELS is added: labels give way to the command.
const topLeastCommand = 20

// columns returns the table's columns on a screen w cells wide: PORTS
// while a job of the table listens on a port, LABELS while one has labels
// and the command keeps topLeastCommand cells beside them; each as wide
// as its widest cell, up to its width. The jobs filtered out count too:
// the layout does not move as the filter is typed.
func (v *topView) columns(w int) []topColumn {
	cols := slices.Clone(topColumns)
	if c, ok := v.fitted(portsColumn); ok {
		cols = slices.Insert(cols, portsAfter+1, c)
	}
	if c, ok := v.fitted(labelsColumn); ok {
		used := 0
		for _, c := range cols {
			used += c.width + 1
		}
		if w-used-c.width-1 >= topLeastCommand {
			cols = slices.Insert(cols, len(cols)-1, c)
		}
	}
	return cols
}

// fitted returns c as wide as its title and its widest cell among the
// jobs that have something for it, up to c.width; not ok when none has.
func (v *topView) fitted(c topColumn) (topColumn, bool) {
	widest, any := uniseg.StringWidth(c.title), false
	for _, j := range v.jobs {
		if c.has(j) {
			widest, any = max(widest, uniseg.StringWidth(c.cell(j, time.Time{}))), true
		}
	}
	c.width = min(widest, c.width)
	return c, any
}

// procsCell is the PROCS cell: the job's live processes, "-" where they
// were not counted.
func procsCell(j jobdir.Job, _ time.Time) string {
	if j.ProcessScan == jobdir.ScanNone {
		return "-"
	}
	return strconv.Itoa(j.LiveProcesses)
}

// durationCell is the DURATION cell: how long the job ran, or runs.
func durationCell(j jobdir.Job, now time.Time) string {
	if d, ok := j.Duration(now); ok {
		return jobtext.Duration(d)
	}
	return "-"
}

// topSpan is text in one style.
type topSpan struct {
	text  string
	style tcell.Style
}

// topLine is one line of the screen: its spans, then the style of the
// rest of the line.
type topLine struct {
	spans []topSpan
	fill  tcell.Style
}

// plain returns a line of text in the terminal's default style.
func plain(s string) topLine { return topLine{spans: []topSpan{{text: s}}} }

// text returns the line's text, as the screen shows it (tests read it).
func (l topLine) text() string {
	var b strings.Builder
	for _, s := range l.spans {
		b.WriteString(s.text)
	}
	return b.String()
}

// render lays out the whole screen, w cells by h rows: h lines, each cut
// to w cells.
func (v *topView) render(w, h int, now time.Time) []topLine {
	var lines []topLine
	title := "bgjob top"
	if v.all {
		title += " (all workspaces)"
	}
	switch {
	case v.help:
		for _, l := range []string{title + ": keys", "",
			"  j, down    move down",
			"  k, up      move up",
			"  /          filter by name, id, command or label (enter keeps it, esc drops it)",
			"  enter      show the job's output (esc goes back)",
			"  a          attach to the job (a --pty job; Ctrl-\\ comes back)",
			"  s          stop the job (TERM, then KILL after the grace), after y",
			"  K          kill the job (KILL), after y",
			"  ?          this help",
			"  q          quit",
			"", "any key goes back"} {
			lines = append(lines, plain(l))
		}
	case v.showing != "":
		lines = append(lines, v.bold(fmt.Sprintf("%s: output of %s (esc goes back)", title, v.showing)))
		if about := v.about(v.showing); about != "" {
			lines = append(lines, plain(about))
		}
		text := strings.Split(strings.TrimRight(string(v.output), "\n"), "\n")
		if n := h - len(lines); len(text) > n {
			text = text[len(text)-n:]
		}
		for _, l := range text {
			lines = append(lines, plain(l))
		}
	default:
		lines = v.table(title, w, h, now)
	}
	for len(lines) < h {
		lines = append(lines, topLine{})
	}
	lines = lines[:h]
	for i := range lines {
		lines[i] = cutLine(lines[i], w)
	}
	return lines
}

// table lays out the table of jobs, h rows: a heading, the columns'
// titles, the jobs that fit with the selected one among them, and a foot.
func (v *topView) table(title string, w, h int, now time.Time) []topLine {
	jobs := v.visible()
	cur, _ := v.selected()
	lines := []topLine{v.bold(v.heading(title, len(jobs)))}
	cols := v.columns(w)
	var hdr []string
	for _, c := range cols {
		hdr = append(hdr, pad(c.title, c.width))
	}
	lines = append(lines, v.bold(strings.Join(hdr, " ")))
	rows := max(h-4, 1)
	first := 0
	if v.sel >= rows {
		first = v.sel - rows + 1
	}
	for i := first; i < len(jobs) && i < first+rows; i++ {
		lines = append(lines, v.row(cols, jobs[i], jobs[i].ID == cur.ID, now))
	}
	if len(jobs) == 0 {
		lines = append(lines, plain("  no jobs"))
	}
	for len(lines) < h-1 {
		lines = append(lines, topLine{})
	}
	return append(lines[:h-1], v.foot())
}

// heading returns the table's first line: the counts of jobs, and of
// those the filter keeps (matched).
func (v *topView) heading(title string, matched int) string {
	running, queued := 0, 0
	for _, j := range v.jobs {
		switch j.Status {
		case jobdir.StatusRunning:
			running++
		case jobdir.StatusQueued:
			queued++
		}
	}
	head := fmt.Sprintf("%s: %d jobs, %d running", title, len(v.jobs), running)
	if queued > 0 {
		head += fmt.Sprintf(", %d queued", queued)
	}
	if v.filter != "" || v.filtering {
		head += fmt.Sprintf(", %d match /%s", matched, v.filter)
	}
	return head
}

// row returns the table's line of job j in the columns cols: its status
// coloured, or the whole line reversed when j is selected.
func (v *topView) row(cols []topColumn, j jobdir.Job, selected bool, now time.Time) topLine {
	cells := make([]string, 0, len(cols))
	for _, c := range cols {
		cells = append(cells, pad(c.cell(j, now), c.width))
	}
	before := strings.Join(cells[:statusColumn], " ") + " "
	status := cells[statusColumn]
	after := " " + strings.Join(cells[statusColumn+1:], " ")
	if selected {
		rev := tcell.StyleDefault.Reverse(true)
		return topLine{spans: []topSpan{{text: before + status + after, style: rev}}, fill: rev}
	}
	var st tcell.Style
	if v.color {
		st = st.Foreground(statusColor(j))
	}
	return topLine{spans: []topSpan{{text: before}, {text: status, style: st}, {text: after}}}
}

// about returns the line said of the job id above its output: the ports
// it listens on and its labels, as status says them, which the table
// may not have room for; "" when it has neither.
func (v *topView) about(id string) string {
	var about []string
	for _, j := range v.jobs {
		if j.ID != id {
			continue
		}
		if len(j.Ports) > 0 {
			ports := make([]string, len(j.Ports))
			for i, p := range j.Ports {
				ports[i] = p.String()
			}
			about = append(about, "ports: "+strings.Join(ports, ", "))
		}
		if len(j.Labels) > 0 {
			about = append(about, "labels: "+labelsText(j.Labels, ", "))
		}
	}
	return strings.Join(about, "  ")
}

// portsText is the PORTS cell of a job that listens on ports: their
// numbers, each once (a port at two addresses, 0.0.0.0 and ::, is one),
// comma separated.
func portsText(ports []jobdir.Port) string {
	var s []string
	for i, p := range ports {
		if i == 0 || p.Port != ports[i-1].Port {
			s = append(s, strconv.Itoa(p.Port))
		}
	}
	return strings.Join(s, ",")
}

// labelsText is a job's labels as KEY=VALUE, by key, separated by sep.
func labelsText(labels map[string]string, sep string) string {
	kv := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, k+"="+labels[k])
	}
	return strings.Join(kv, sep)
}

// or returns s, or else when s is "".
func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// foot returns the table's last line: the question asked, the filter
// typed, the last error or note, or else the keys.
func (v *topView) foot() topLine {
	switch {
	case v.confirm != "":
		return v.bold(fmt.Sprintf("%s job %s? y/n", v.confirm, v.confirmID))
	case v.filtering:
		return plain("/" + v.filter + "_")
	case v.err != nil:
		return plain("error: " + oneLine(v.err.Error()))
	case v.note != "":
		return plain(v.note)
	}
	return plain("j/k move  / filter  enter output  a attach  s stop  K kill  ? help  q quit")
}

// statusColor is the colour of a job's status: green running, cyan
// queued, yellow killed, red another end but exit 0, which has none.
func statusColor(j jobdir.Job) tcell.Color {
	switch {
	case j.Status == jobdir.StatusRunning:
		return tcell.ColorGreen
	case j.Status == jobdir.StatusQueued:
		return tcell.ColorTeal
	case j.Status == jobdir.StatusExited && j.ExitCode != nil && *j.ExitCode == 0:
		return tcell.ColorDefault
	case j.Status == jobdir.StatusKilled:
		return tcell.ColorOlive
	}
	return tcell.ColorMaroon
}

// bold returns a line of bold text (plain text without colour).
func (v *topView) bold(s string) topLine {
	if !v.color {
		return plain(s)
	}
	return topLine{spans: []topSpan{{text: s, style: tcell.StyleDefault.Bold(true)}}}
}

// pad cuts s to n cells, ending it with "…" when it is cut, or pads it
// with spaces to n cells (n 0: s as it is). A control character is shown
// as a space.
func pad(s string, n int) string {
	s = printable(s)
	if n == 0 {
		return s
	}
	if w := uniseg.StringWidth(s); w <= n {
		return s + strings.Repeat(" ", n-w)
	}
	s = cut(s, n-1)
	return s + "…" + strings.Repeat(" ", n-1-uniseg.StringWidth(s))
}

// cut returns the longest start of s that takes at most n cells.
func cut(s string, n int) string {
	width, state := 0, -1
	for rest := s; rest != ""; {
		var (
			c string
			w int
		)
		c, rest, w, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if width+w > n {
			return s[:len(s)-len(rest)-len(c)]
		}
		width += w
	}
	return s
}

// cutLine cuts a line to w cells, its control characters shown as spaces.
func cutLine(l topLine, w int) topLine {
	out := topLine{fill: l.fill}
	for _, s := range l.spans {
		p := printable(s.text)
		t := cut(p, w)
		w -= uniseg.StringWidth(t)
		out.spans = append(out.spans, topSpan{text: t, style: s.style})
		if len(t) < len(p) {
			break
		}
	}
	return out
}

// printable replaces control characters with spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r >= 0x7f && r < 0xa0 {
			return ' '
		}
		return r
	}, s)
}

// oneLine puts s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
