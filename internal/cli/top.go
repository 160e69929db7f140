package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

// topEvery is how often top reads the jobs again by default: over SSH the
// whole list; locally, where file events say when a job is made or
// removed or a job's file changes, only the jobs that may still change (a
// wrapper killed with SIGKILL changes no file, and a job's processes come
// and go without one).
const topEvery = time.Second

// topGap is the least time between two reads of top: a burst of file
// events is one read, and at most about ten redraws a second.
const topGap = 100 * time.Millisecond

type topOptions struct {
	all     bool
	noColor bool
	every   time.Duration
}

func (a *app) topCommand() *cobra.Command {
	var o topOptions
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live view of the workspace's jobs: their state, output, stop and kill",
		Long: `Show the jobs of the workspace (-A: of every workspace) in a table, name,
id, status, exit code, live processes, duration and command, newest
first, kept current: on this machine file events say when a job is made,
ends or is removed, and the jobs that may still change are read again
every second (--interval); over SSH the whole table is read every
second. A job that ends changes on screen at once locally, within two
seconds over SSH.

Keys: j and k or the arrows move; / filters by name, id or command (enter
keeps the filter, esc drops it); enter shows the job's output, plain text,
followed (esc goes back); a attaches to a job run with --pty, as 'bgjob
attach' does, and Ctrl-\ detaches and comes back to top, as does the
job's end; s stops the selected job after a y/n confirmation (TERM, then
KILL after the grace) and K kills it (KILL) after one; ? shows the keys;
q quits. top never moves a 'logs --new' cursor.

The terminal is restored however top ends: q, an error, a panic, SIGTERM
or SIGHUP. Colour marks the status unless NO_COLOR is set or --no-color is
given; the selected row is shown reversed. stdin and stdout must be a
terminal; 'bgjob ls' prints the table once.`,
		Example: `  bgjob top
  bgjob top -A
  bgjob -H build-host top`,
		Args: needArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("NO_COLOR") != "" {
				o.noColor = true
			}
			if o.every <= 0 {
				return usageError("--interval must be positive")
			}
			return a.top(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all-workspaces", "A", false, "show the jobs of every workspace")
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "no colour (also when NO_COLOR is set)")
	cmd.Flags().DurationVar(&o.every, "interval", topEvery, "how often to read the jobs again (locally: those that may still change)")
	return cmd
}

func (a *app) top(ctx context.Context, o topOptions) (err error) {
	if a.many() {
		return usageError("top shows the jobs of one host: give one -H host")
	}
	in, out, ok := a.terminals()
	if !ok {
		return usageError("top needs a terminal on stdin and stdout: 'bgjob ls' prints the jobs once")
	}
	c, release, err := a.connect(ctx, a.host)
	if err != nil {
		return err
	}
	defer release()
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return fmt.Errorf("making the terminal raw: %w", err)
	}
	// The alternate screen, the cursor hidden; all of it undone however
	// top ends (a panic included: restored, then panicking on).
	fmt.Fprint(out, "\x1b[?1049h\x1b[?25l")
	defer func() {
		fmt.Fprint(out, "\x1b[?25h\x1b[?1049l")
		term.Restore(int(in.Fd()), state)
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := &topSession{a: a, c: c, o: o, in: in, out: out, state: state, v: &topView{color: !o.noColor, all: o.all}}
	return t.run(ctx)
}

// topSession is one run of top: the view, and what keeps it current.
type topSession struct {
	a       *app
	c       *bgjob.Client
	o       topOptions
	in, out *os.File
	state   *term.State // the terminal as top found it
	v       *topView
	drawn   string // the screen last written
}

// topWant is what top reads next.
type topWant struct {
	list   bool // the whole list
	jobs   bool // the jobs that may still change
	output bool // the output shown
}

func (w topWant) any() bool { return w.list || w.jobs || w.output }

// topAnswer is what one read brought.
type topAnswer struct {
	want   topWant
	jobs   []jobdir.Job // the list, or the jobs read again
	gone   bool         // a job read again was not found: read the list
	output []byte
	outID  string
	err    error
}

// client returns the client of the job's workspace.
func (t *topSession) client(j jobdir.Job) (*bgjob.Client, error) {
	if !t.o.all {
		return t.c, nil
	}
	return t.c.InWorkspace(path.Base(path.Dir(j.Dir)))
}

// clientOf returns the client of the workspace of the job shown as id.
func (t *topSession) clientOf(id string) (*bgjob.Client, error) {
	for _, j := range t.v.jobs {
		if j.ID == id {
			return t.client(j)
		}
	}
	return t.c, nil
}

// read reads what want asks: the list, or the jobs of live read again,
// and the output of the job outID.
func (t *topSession) read(ctx context.Context, want topWant, live []jobdir.Job, outID string, out *bgjob.Client) topAnswer {
	ans := topAnswer{want: want}
	switch {
	case want.list:
		page, err := t.c.List(ctx, bgjob.ListOptions{AllWorkspaces: t.o.all})
		ans.jobs, ans.err = page.Jobs, err
	case want.jobs:
		// One look per workspace at its jobs that may still change.
		ids := map[string][]string{}
		var first []jobdir.Job
		for _, j := range live {
			ws := path.Dir(j.Dir)
			if ids[ws] == nil {
				first = append(first, j)
			}
			ids[ws] = append(ids[ws], j.ID)
		}
		for _, f := range first {
			c, err := t.client(f)
			if err == nil {
				var got []jobdir.Job
				got, err = c.Status(ctx, ids[path.Dir(f.Dir)]...)
				ans.jobs = append(ans.jobs, got...)
			}
			switch {
			case errors.Is(err, bgjob.ErrNotFound):
				ans.gone = true
			case err != nil:
				ans.err = err
			}
		}
	}
	if outID != "" && want.output && ans.err == nil {
		var b bytes.Buffer
		_, ans.err = out.Logs(ctx, outID, bgjob.LogOptions{Tail: 200, MaxBytes: 64 << 10}, &b, &b)
		ans.output, ans.outID = termtext.Strip(b.Bytes()), outID
	}
	return ans
}

// live returns the jobs that may still change without a file event: those
// not ended (and readable), and ended ones with processes left.
func live(jobs []jobdir.Job) []jobdir.Job {
	var l []jobdir.Job
	for _, j := range jobs {
		if !j.Status.Ended() && j.Status != jobdir.StatusUnreadable || j.LiveProcesses > 0 {
			l = append(l, j)
		}
	}
	return l
}

// unended returns the jobs whose files top watches: those not ended.
func unended(jobs []jobdir.Job) ([]jobdir.Job, string) {
	var (
		u   []jobdir.Job
		ids []string
	)
	for _, j := range jobs {
		if !j.Status.Ended() {
			u = append(u, j)
			ids = append(ids, j.ID)
		}
	}
	return u, strings.Join(ids, " ")
}

func (t *topSession) run(ctx context.Context) error {
	c, v := t.c, t.v
	keyc, stopKeys, err := readKeys(t.in)
	if err != nil {
		return err
	}
	defer func() { stopKeys() }()
	winch := make(chan os.Signal, 1)
	defer notifyResize(winch)()
	hup := make(chan os.Signal, 1)
	defer notifyHangup(hup)()

	// Locally the workspace's directory (the root's with -A) says when a
	// job is made or removed, and the directories of the jobs not ended
	// when one of their files changes. Over SSH there are no events: the
	// list is read again on each tick.
	listed, err := c.WatchJobs(ctx, t.o.all)
	watching := err == nil && listed != nil // file events come
	local := err != nil || listed != nil    // a watch may come: the workspace is made later
	var (
		files      <-chan string
		endFiles   = func() {}
		filesKey   = "-"
		want       = topWant{list: true}
		busy       bool
		lastRead   time.Time
		readAt     <-chan time.Time
		answers    = make(chan topAnswer, 1)
		stopErrors = make(chan error, 1)
	)
	defer func() { endFiles() }()
	// watchFiles watches the files of the jobs not ended, when they are
	// others than those watched, and then reads them once more: what
	// changed before the watch was in place it could not see.
	watchFiles := func() {
		u, key := unended(v.jobs)
		if !watching || key == filesKey {
			return
		}
		endFiles()
		fctx, fcancel := context.WithCancel(ctx)
		endFiles, filesKey = fcancel, key
		var werr error
		files, werr = c.WatchFiles(fctx, u)
		if werr != nil {
			// A job removed meanwhile: its removal is a change of the
			// workspace, and the list read for it watches again.
			files, filesKey = nil, "-"
		}
		want.jobs = true
		for _, j := range u {
			if j.Status == jobdir.StatusUnreadable {
				// Made before its meta.json: a status look cannot
				// find it, the list can.
				want.list = true
			}
		}
	}
	// schedule starts the read that is wanted, unless one is under way
	// (its answer schedules again) or the last began under topGap ago.
	schedule := func() {
		if busy || !want.any() || readAt != nil {
			return
		}
		if d := topGap - time.Since(lastRead); d > 0 {
			readAt = time.After(d)
			return
		}
		w, l, outID := want, live(v.jobs), v.showing
		out, err := t.clientOf(outID)
		if err != nil {
			v.err = err
			return
		}
		want, busy, lastRead = topWant{}, true, time.Now()
		go func() { answers <- t.read(ctx, w, l, outID, out) }()
	}
	tick := time.NewTicker(t.o.every)
	defer tick.Stop()
	redraw := time.NewTicker(time.Second) // durations move on
	defer redraw.Stop()
	schedule()
	t.draw()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-hup:
			return &exitError{code: 129}
		case <-winch:
		case <-redraw.C:
		case <-tick.C:
			switch {
			case watching:
				want.jobs = want.jobs || len(live(v.jobs)) > 0
			case local:
				// The workspace made since? Then events come.
				if listed, err = c.WatchJobs(ctx, t.o.all); err == nil {
					watching = true
				}
				want.list = true
			default:
				want.list = true
			}
			want.output = want.output || v.showing != ""
			schedule()
		case <-listed:
			want.list = true
			schedule()
			continue
		case name := <-files:
			switch name {
			case jobdir.StdoutFile, jobdir.StderrFile:
				want.output = want.output || v.showing != ""
			case jobdir.MetaFile:
				// A job made: it was unreadable until now.
				want.list = true
			default:
				want.jobs = true
			}
			schedule()
			continue
		case <-readAt:
			readAt = nil
			schedule()
			continue
		case ans := <-answers:
			busy = false
			t.answer(ans)
			if ans.gone {
				want.list = true
			}
			if ans.err == nil {
				watchFiles()
			}
			schedule()
		case err := <-stopErrors:
			v.err = err
		case b, ok := <-keyc:
			if !ok {
				return nil
			}
		keys:
			for _, k := range splitKeys(b) {
				switch act := v.key(k); act.kind {
				case actQuit:
					return nil
				case actAttach:
					// The terminal is the job's until it is detached
					// from or ends: top reads no key meanwhile, and the
					// keys typed after this one go to the job.
					stopKeys()
					note, err := t.attach(ctx, act.id)
					if ctx.Err() != nil {
						return ctx.Err()
					}
					var ee *exitError
					if errors.As(err, &ee) {
						return err // SIGHUP
					}
					v.note, v.err = note, err
					if keyc, stopKeys, err = readKeys(t.in); err != nil {
						return err
					}
					want.list = true
					schedule()
					break keys
				case actRead:
					want.output = true
					schedule()
				case actStop, actKill:
					so := bgjob.StopOptions{}
					if act.kind == actKill {
						so = bgjob.StopOptions{Signal: "KILL", Grace: new(time.Duration(0))}
					}
					sc, err := t.clientOf(act.id)
					go func() {
						if err == nil {
							_, err = sc.Stop(ctx, []string{act.id}, so)
						}
						if err != nil {
							select {
							case stopErrors <- err:
							default:
							}
						}
					}()
				}
			}
		}
		t.draw()
	}
}

// answer puts what a read brought into the view.
func (t *topSession) answer(ans topAnswer) {
	v := t.v
	v.err = ans.err
	if ans.err != nil {
		return
	}
	switch {
	case ans.want.list:
		v.jobs = ans.jobs
	case ans.want.jobs:
		got := make(map[string]jobdir.Job, len(ans.jobs))
		for _, j := range ans.jobs {
			got[j.ID] = j
		}
		jobs := make([]jobdir.Job, len(v.jobs))
		for i, j := range v.jobs {
			if n, ok := got[j.ID]; ok {
				j = n
			}
			jobs[i] = j
		}
		v.jobs = jobs
	}
	if ans.outID != "" && ans.outID == v.showing {
		v.output = ans.output
	}
}

// draw writes the screen when it has changed.
func (t *topSession) draw() {
	w, h, err := term.GetSize(int(t.out.Fd()))
	if err != nil {
		w, h = 80, 24
	}
	if s := t.v.render(w, h, time.Now()); s != t.drawn {
		io.WriteString(t.out, s)
		t.drawn = s
	}
}

// readKeys reads what is typed on in, a read at a time, until stop, which
// returns once no more is read (keys typed after are left on the
// terminal). The channel is closed when the terminal is gone.
func readKeys(in *os.File) (keys <-chan []byte, stop func(), err error) {
	r, err := newKeyReader(in)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan []byte)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		defer close(ch)
		for {
			buf := make([]byte, 256)
			n, err := r.Read(buf)
			if err != nil || n == 0 {
				return
			}
			select {
			case ch <- buf[:n]:
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			r.Close()
			<-exited
		})
	}
	return ch, stop, nil
}

// attach runs bgjob attach on the job shown as id, top's screen set
// aside meanwhile and drawn whole again after, and returns what to say
// of it.
func (t *topSession) attach(ctx context.Context, id string) (string, error) {
	var job jobdir.Job
	for _, j := range t.v.jobs {
		if j.ID == id {
			job = j
		}
	}
	switch {
	case !job.PTY:
		return "job " + id + " has no terminal (not run --pty): enter shows its output", nil
	case job.Status.Ended():
		return "job " + id + " has ended: enter shows its output", nil
	}
	c, err := t.client(job)
	if err != nil {
		return "", err
	}
	// The terminal as top found it, the cursor shown, on top's alternate
	// screen: attach makes it raw, and restores it, itself.
	fmt.Fprint(t.out, "\x1b[?25h")
	term.Restore(int(t.in.Fd()), t.state)
	defer func() {
		term.MakeRaw(int(t.in.Fd()))
		fmt.Fprint(t.out, "\x1b[?1049h\x1b[?25l")
		t.drawn = ""
	}()
	s := &attachSession{a: t.a, c: c, job: job, in: t.in, out: t.out,
		o: attachOptions{ref: id, detachKey: topDetachKey, stdin: true}}
	end, err := s.run(ctx)
	switch {
	case err != nil:
		return "", err
	case end.ended:
		return "job " + id + " " + endText(end.job), nil
	}
	return "detached from job " + id + ", which runs on", nil
}

// topDetachKey is the key that detaches from a job attached to from top,
// attach's: Ctrl-\.
const topDetachKey = 0x1c

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

// splitKeys splits what one read of the terminal brought into keys: an
// escape sequence (ESC [ or ESC O, up to its final byte), ESC alone, or
// one character.
func splitKeys(b []byte) []string {
	var keys []string
	for len(b) > 0 {
		n := 1
		switch {
		case b[0] == 0x1b && len(b) > 2 && (b[1] == '[' || b[1] == 'O'):
			n = 2
			for n < len(b) && (b[n] < 0x40 || b[n] > 0x7e) {
				n++
			}
			n = min(n+1, len(b))
		case b[0] >= 0x80:
			_, n = utf8.DecodeRune(b)
		}
		keys = append(keys, string(b[:n]))
		b = b[n:]
	}
	return keys
}

// key handles one key (see splitKeys).
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
		case s == "\r" || s == "\n":
			v.filtering = false
		case s == "\x1b":
			v.filtering, v.filter = false, ""
		case s == "\x7f" || s == "\b":
			if v.filter != "" {
				_, n := utf8.DecodeLastRuneInString(v.filter)
				v.filter = v.filter[:len(v.filter)-n]
			}
		case s == "\x03":
			return topAction{kind: actQuit}
		case len(s) > 0 && s[0] >= ' ' && utf8.ValidString(s):
			v.filter += s
		}
		return topAction{}
	case v.showing != "":
		switch s {
		case "\x1b", "q":
			v.showing, v.output = "", nil
		case "\x03":
			return topAction{kind: actQuit}
		}
		return topAction{}
	}
	switch s {
	case "q", "\x03":
		return topAction{kind: actQuit}
	case "j", "\x1b[B", "\x1bOB":
		v.selected()
		v.sel++
		v.selID = ""
		v.selectIndex()
	case "k", "\x1b[A", "\x1bOA":
		v.selected()
		v.sel--
		v.selID = ""
		v.selectIndex()
	case "/":
		v.filtering, v.note = true, ""
	case "?":
		v.help = true
	case "\r", "\n":
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

// topColumns are the table's columns and their widths (the command takes
// the rest).
var topColumns = []struct {
	title string
	width int
}{{"NAME", 12}, {"ID", 22}, {"STATUS", 8}, {"EXIT", 4}, {"PROCS", 5}, {"DURATION", 8}, {"COMMAND", 0}}

// render draws the whole screen, w columns by h rows, from its top left.
func (v *topView) render(w, h int, now time.Time) string {
	var lines []string
	title := "bgjob top"
	if v.all {
		title += " (all workspaces)"
	}
	switch {
	case v.help:
		lines = append(lines, title+": keys", "",
			"  j, down    move down",
			"  k, up      move up",
			"  /          filter by name, id or command (enter keeps it, esc drops it)",
			"  enter      show the job's output (esc goes back)",
			"  a          attach to the job (a --pty job; Ctrl-\\ comes back)",
			"  s          stop the job (TERM, then KILL after the grace), after y",
			"  K          kill the job (KILL), after y",
			"  ?          this help",
			"  q          quit",
			"", "any key goes back")
	case v.showing != "":
		lines = append(lines, v.bold(fmt.Sprintf("%s: output of %s (esc goes back)", title, v.showing)))
		text := strings.Split(strings.TrimRight(string(v.output), "\n"), "\n")
		if n := h - 1; len(text) > n {
			text = text[len(text)-n:]
		}
		lines = append(lines, text...)
	default:
		lines = v.table(title, w, h, now)
	}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i := 0; i < h; i++ {
		if i < len(lines) {
			b.WriteString(fit(lines[i], w))
		}
		b.WriteString("\x1b[K")
		if i < h-1 {
			b.WriteString("\r\n")
		}
	}
	return b.String()
}

func (v *topView) table(title string, w, h int, now time.Time) []string {
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
	lines := []string{v.bold(head)}
	var hdr []string
	for _, c := range topColumns {
		hdr = append(hdr, pad(c.title, c.width))
	}
	lines = append(lines, v.bold(fit(strings.Join(hdr, " "), w)))
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
		status := pad(string(j.Status), 8)
		cells := []string{pad(name, 12), pad(j.ID, 22), status, pad(exitText(j), 4), pad(procs, 5), pad(dur, 8), oneLine(j.Command)}
		line := fit(strings.Join(cells, " "), w)
		switch {
		case j.ID == cur.ID:
			line = "\x1b[7m" + pad(line, w) + "\x1b[0m"
		case v.color:
			line = strings.Replace(line, status, v.statusColor(j)+status+"\x1b[0m", 1)
		}
		lines = append(lines, line)
	}
	if len(jobs) == 0 {
		lines = append(lines, "  no jobs")
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	foot := "j/k move  / filter  enter output  a attach  s stop  K kill  ? help  q quit"
	switch {
	case v.confirm != "":
		foot = v.bold(fmt.Sprintf("%s job %s? y/n", v.confirm, v.confirmID))
	case v.filtering:
		foot = "/" + v.filter + "_"
	case v.err != nil:
		foot = "error: " + oneLine(v.err.Error())
	case v.note != "":
		foot = v.note
	}
	return append(lines[:h-1], foot)
}

func (v *topView) statusColor(j jobdir.Job) string {
	switch {
	case j.Status == jobdir.StatusRunning:
		return "\x1b[32m"
	case j.Status == jobdir.StatusQueued:
		return "\x1b[36m"
	case j.Status == jobdir.StatusExited && j.ExitCode != nil && *j.ExitCode == 0:
		return ""
	case j.Status == jobdir.StatusKilled:
		return "\x1b[33m"
	}
	return "\x1b[31m"
}

func (v *topView) bold(s string) string {
	if !v.color {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

// pad cuts or pads s to n columns (runes; n 0: as is).
func pad(s string, n int) string {
	if n == 0 {
		return s
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s + strings.Repeat(" ", n-len(r))
}

// fit cuts s to w columns, escape sequences not counted.
func fit(s string, w int) string {
	var b strings.Builder
	cols := 0
	for i := 0; i < len(s); {
		if s[i] == '\x1b' {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			b.WriteString(s[i : i+j+1])
			i += j + 1
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if cols == w {
			break
		}
		if r < ' ' {
			r = ' '
		}
		b.WriteRune(r)
		cols++
		i += n
	}
	return b.String()
}

// oneLine puts s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
