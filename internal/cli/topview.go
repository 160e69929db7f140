package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"

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
		if strings.Contains(strings.ToLower(j.ID+"\x00"+j.Name+"\x00"+j.Command), f) {
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

// key handles one key, by its name.
func (v *topView) key(s string) topAction {
	switch {
	case v.help:
		v.help = false
		return topAction{}
	case v.confirm != "":
		kind, id := actStop, v.confirmID
		if v.confirm == "kill" {
			kind = actKill
		}
		what := v.confirm
		v.confirm, v.confirmID = "", ""
		if s == "y" || s == "Y" {
			v.note = what + " sent to " + id
			return topAction{kind: kind, id: id}
		}
		v.note = ""
		return topAction{}
	case v.filtering:
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
	case v.showing != "":
		switch s {
		case keyEsc, "q":
			v.showing, v.output = "", nil
		case keyCtrlC:
			return topAction{kind: actQuit}
		}
		return topAction{}
	}
	switch s {
	case "q", keyCtrlC:
		return topAction{kind: actQuit}
	case "j", keyDown:
		v.selected()
		v.sel++
		v.selID = ""
		v.selectIndex()
	case "k", keyUp:
		v.selected()
		v.sel--
		v.selID = ""
		v.selectIndex()
	case "/":
		v.filtering, v.note = true, ""
	case "?":
		v.help = true
	case keyEnter:
		if j, ok := v.selected(); ok {
			v.showing, v.output = j.ID, nil
			return topAction{kind: actRead}
		}
	case "a":
		if j, ok := v.selected(); ok {
			v.note = ""
			return topAction{kind: actAttach, id: j.ID}
		}
	case "s", "K":
		if j, ok := v.selected(); ok {
			v.confirm, v.confirmID = "stop", j.ID
			if s == "K" {
				v.confirm = "kill"
			}
		}
	}
	return topAction{}
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

// topColumns are the table's columns and their widths in cells (the
// command takes the rest).
var topColumns = []struct {
	title string
	width int
}{{"NAME", 12}, {"ID", 22}, {"STATUS", 8}, {"EXIT", 4}, {"PROCS", 5}, {"DURATION", 8}, {"COMMAND", 0}}

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
			"  /          filter by name, id or command (enter keeps it, esc drops it)",
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
		text := strings.Split(strings.TrimRight(string(v.output), "\n"), "\n")
		if n := h - 1; len(text) > n {
			text = text[len(text)-n:]
		}
		for _, l := range text {
			lines = append(lines, plain(l))
		}
	default:
		lines = v.table(title, h, now)
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

func (v *topView) table(title string, h int, now time.Time) []topLine {
	jobs := v.visible()
	cur, _ := v.selected()
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
		head += fmt.Sprintf(", %d match /%s", len(jobs), v.filter)
	}
	lines := []topLine{v.bold(head)}
	var hdr []string
	for _, c := range topColumns {
		hdr = append(hdr, pad(c.title, c.width))
	}
	lines = append(lines, v.bold(strings.Join(hdr, " ")))
	rows := max(h-4, 1)
	first := 0
	if v.sel >= rows {
		first = v.sel - rows + 1
	}
	for i := first; i < len(jobs) && i < first+rows; i++ {
		j := jobs[i]
		procs := strconv.Itoa(j.LiveProcesses)
		if j.ProcessScan == jobdir.ScanNone {
			procs = "-"
		}
		dur := "-"
		if d, ok := j.Duration(now); ok {
			dur = durationText(d)
		}
		name := j.Name
		if name == "" {
			name = "-"
		}
		before := strings.Join([]string{pad(name, 12), pad(j.ID, 22)}, " ") + " "
		status := pad(string(j.Status), 8)
		after := " " + strings.Join([]string{pad(exitText(j), 4), pad(procs, 5), pad(dur, 8), oneLine(j.Command)}, " ")
		var st tcell.Style
		if v.color {
			st = st.Foreground(statusColor(j))
		}
		line := topLine{spans: []topSpan{{text: before}, {text: status, style: st}, {text: after}}}
		if j.ID == cur.ID {
			rev := tcell.StyleDefault.Reverse(true)
			line = topLine{spans: []topSpan{{text: before + status + after, style: rev}}, fill: rev}
		}
		lines = append(lines, line)
	}
	if len(jobs) == 0 {
		lines = append(lines, plain("  no jobs"))
	}
	for len(lines) < h-1 {
		lines = append(lines, topLine{})
	}
	foot := plain("j/k move  / filter  enter output  a attach  s stop  K kill  ? help  q quit")
	switch {
	case v.confirm != "":
		foot = v.bold(fmt.Sprintf("%s job %s? y/n", v.confirm, v.confirmID))
	case v.filtering:
		foot = plain("/" + v.filter + "_")
	case v.err != nil:
		foot = plain("error: " + oneLine(v.err.Error()))
	case v.note != "":
		foot = plain(v.note)
	}
	return append(lines[:h-1], foot)
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
