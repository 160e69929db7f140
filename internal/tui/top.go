package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

// TopOptions are what top shows, and how often it looks.
type TopOptions struct {
	// All shows the jobs of every workspace, not only the client's.
	All bool
	// NoColor shows the status without colour.
	NoColor bool
	// Interval is how often top reads the jobs again (DefaultInterval;
	// locally: how often it looks for a wrapper gone).
	Interval time.Duration
}

// Top shows the jobs of c's workspace (o.All: of every workspace) on tty,
// kept current, until q, SIGHUP (an *ExitError of status 129), or the
// end of ctx, and restores the terminal however it ends.
func Top(ctx context.Context, c *bgjob.Client, tty Terminal, o TopOptions) (err error) {
	// tcell holds the terminal: raw, on the alternate screen, the cursor
	// hidden; all of it undone however top ends (a panic included:
	// restored, then panicking on).
	screen, err := tcell.NewScreen()
	if err != nil {
		return fmt.Errorf("opening the terminal: %w", err)
	}
	if err := screen.Init(); err != nil {
		return fmt.Errorf("opening the terminal: %w", err)
	}
	defer screen.Fini()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := &topSession{c: c, o: o, tty: tty, screen: screen, v: &topView{color: !o.NoColor, all: o.All}}
	return t.run(ctx)
}

// topSession is one run of top: the view, and what keeps it current.
type topSession struct {
	c      *bgjob.Client
	o      TopOptions
	tty    Terminal
	screen tcell.Screen
	v      *topView
	drawn  string // the screen last drawn, as fmt prints its lines

	// What says that jobs changed (see watchJobs).
	listed   <-chan struct{} // a job made or removed
	watching bool            // file events come
	local    bool            // a watch may come: the workspace is made later
	files    <-chan string   // the name of a file changed, of a job not ended
	endFiles func()          // ends the watch of files
	filesKey string          // the ids of the jobs whose files are watched

	// The reads (see schedule), and the stops under way.
	want       topWant          // what the next read reads
	busy       bool             // a read is under way
	lastRead   time.Time        // the start of the last read
	lastScan   time.Time        // the start of the last read that looked up ports (scanEvery)
	readAt     <-chan time.Time // the end of topGap, for a read put off
	answers    chan topAnswer
	stopErrors chan error
}

// topWant is what top reads next.
type topWant struct {
	list   bool // the whole list
	jobs   bool // the jobs that may still change
	output bool // the output shown
	// ports looks up, with the list or the jobs, the ports they listen
	// on: schedule asks it once a scan period (see scanEvery).
	ports bool
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
	if !t.o.All {
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
		page, err := t.c.List(ctx, bgjob.ListOptions{AllWorkspaces: t.o.All, Ports: want.ports})
		ans.jobs, ans.err = page.Jobs, err
	case want.jobs:
		// One look per workspace at its jobs that may still change,
		// oldest first (ids sort by their start): the status script then
		// reads the environments of the host's processes, for escapees,
		// once, those started since the first job, where newest first
		// would read them again for each older job (up to three times).
		live = slices.Clone(live)
		slices.SortFunc(live, func(a, b jobdir.Job) int { return strings.Compare(a.ID, b.ID) })
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
				got, err = c.StatusWith(ctx, bgjob.StatusOptions{Ports: want.ports}, ids[path.Dir(f.Dir)]...)
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
		if j.Status.Active() || j.LiveProcesses > 0 {
			l = append(l, j)
		}
	}
	return l
}

// tickReads reports whether top's tick reads again, locally, the jobs
// that may still change without a file event (live): every scanEvery
// since the last read of them (sinceScan), for their processes; and
// between, only when one is neither running nor ended (queued), or when a
// running job's wrapper may have ended (mayHaveEnded).
func tickReads(l []jobdir.Job, sinceScan, scanEvery time.Duration, mayHaveEnded func([]jobdir.Job) bool) bool {
	if len(l) == 0 {
		return false
	}
	if sinceScan >= scanEvery {
		return true
	}
	var running []jobdir.Job
	for _, j := range l {
		switch {
		case j.Status == jobdir.StatusRunning:
			running = append(running, j)
		case !j.Status.Ended():
			return true
		}
	}
	return len(running) > 0 && mayHaveEnded(running)
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
	events := make(chan tcell.Event, 16)
	go t.screen.ChannelEvents(events, ctx.Done())
	hup := make(chan os.Signal, 1)
	defer notifyHangup(hup)()

	t.want, t.filesKey, t.endFiles = topWant{list: true}, "-", func() {}
	t.answers, t.stopErrors = make(chan topAnswer, 1), make(chan error, 1)
	t.watchJobs(ctx)
	defer func() { t.endFiles() }()
	tick := time.NewTicker(t.o.Interval)
	defer tick.Stop()
	redraw := time.NewTicker(topRedrawEvery)
	defer redraw.Stop()
	t.schedule(ctx)
	t.draw()
	for {
		// An event of a watch, or the end of topGap, only asks for a read:
		// the screen is drawn again when the read's answer comes.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-hup:
			return &ExitError{Code: 129}
		case <-redraw.C:
		case <-tick.C:
			t.tick(ctx)
		case <-t.listed:
			t.want.list = true
			t.schedule(ctx)
			continue
		case name := <-t.files:
			t.fileChanged(name)
			t.schedule(ctx)
			continue
		case <-t.readAt:
			t.readAt = nil
			t.schedule(ctx)
			continue
		case ans := <-t.answers:
			t.answered(ctx, ans)
		case err := <-t.stopErrors:
			t.v.err = err
		case ev, ok := <-events:
			if !ok {
				// ctx's end, or the screen is gone.
				return ctx.Err()
			}
			if quit, err := t.event(ctx, ev); quit {
				return err
			}
		}
		t.draw()
	}
}

// watchJobs watches, locally, the workspace's directory (the root's with
// -A), which says when a job is made or removed; watchFiles then watches
// the directories of the jobs not ended, which say when one of their files
// changes. Over SSH there are no events: the list is read again on each
// tick.
func (t *topSession) watchJobs(ctx context.Context) {
	listed, err := t.c.WatchJobs(ctx, t.o.All)
	t.listed = listed
	t.watching = err == nil && listed != nil // file events come
	t.local = err != nil || listed != nil    // a watch may come: the workspace is made later
}

// watchFiles watches the files of the jobs not ended, when they are
// others than those watched, and then reads them once more: what changed
// before the watch was in place it could not see.
func (t *topSession) watchFiles(ctx context.Context) {
	u, key := unended(t.v.jobs)
	if !t.watching || key == t.filesKey {
		return
	}
	t.endFiles()
	fctx, fcancel := context.WithCancel(ctx)
	t.endFiles, t.filesKey = fcancel, key
	var err error
	t.files, err = t.c.WatchFiles(fctx, u)
	if err != nil {
		// A job removed meanwhile: its removal is a change of the
		// workspace, and the list read for it watches again.
		t.files, t.filesKey = nil, "-"
	}
	t.want.jobs = true
	for _, j := range u {
		if j.Status == jobdir.StatusUnreadable {
			// Made before its meta.json: a status look cannot find it,
			// the list can.
			t.want.list = true
		}
	}
}

// tick asks, on each of top's ticks, for what may have changed without
// an event.
func (t *topSession) tick(ctx context.Context) {
	switch {
	case t.watching:
		t.want.jobs = t.want.jobs || tickReads(live(t.v.jobs), time.Since(t.lastScan), t.scanEvery(), t.c.MayHaveEnded)
	case t.local:
		// The workspace made since? Then events come.
		var err error
		if t.listed, err = t.c.WatchJobs(ctx, t.o.All); err == nil {
			t.watching = true
		}
		t.want.list = true
	default:
		t.want.list = true
	}
	t.want.output = t.want.output || t.v.showing != ""
	t.schedule(ctx)
}

// fileChanged asks for what a change of the file name of a job not ended
// calls for.
func (t *topSession) fileChanged(name string) {
	switch name {
	case jobdir.StdoutFile, jobdir.StderrFile:
		t.want.output = t.want.output || t.v.showing != ""
	case jobdir.MetaFile:
		// A job made: it was unreadable until now.
		t.want.list = true
	default:
		t.want.jobs = true
	}
}

// schedule starts the read that is wanted, unless one is under way (its
// answer schedules again) or the last began under topGap ago.
func (t *topSession) schedule(ctx context.Context) {
	if t.busy || !t.want.any() || t.readAt != nil {
		return
	}
	if d := topGap - time.Since(t.lastRead); d > 0 {
		t.readAt = time.After(d)
		return
	}
	w, l, outID := t.want, live(t.v.jobs), t.v.showing
	out, err := t.clientOf(outID)
	if err != nil {
		t.v.err = err
		return
	}
	t.want, t.busy, t.lastRead = topWant{}, true, time.Now()
	if (w.list || w.jobs) && t.lastRead.Sub(t.lastScan) >= t.scanEvery() {
		w.ports, t.lastScan = true, t.lastRead
	}
	go func() { t.answers <- t.read(ctx, w, l, outID, out) }()
}

// scanEvery is how often top looks up the ports of the jobs it reads
// (and, locally, reads again for their processes the jobs that may still
// change, tickReads): ports come and go without a file event, and over
// SSH, where the list is read on every tick, a look at them each time
// would run a script for each job with processes every second.
func (t *topSession) scanEvery() time.Duration { return max(topScanEvery, t.o.Interval) }

// answered takes the answer of the read under way, and schedules the next.
func (t *topSession) answered(ctx context.Context, ans topAnswer) {
	t.busy = false
	t.answer(ans)
	if ans.gone {
		t.want.list = true
	}
	if ans.err == nil {
		t.watchFiles(ctx)
	}
	t.schedule(ctx)
}

// event handles one event of the terminal, and reports whether top ends,
// and with what error.
func (t *topSession) event(ctx context.Context, ev tcell.Event) (quit bool, err error) {
	var k string
	switch ev := ev.(type) {
	case *tcell.EventResize:
		t.screen.Sync()
	case *tcell.EventKey:
		k = topKey(ev)
	}
	if k == "" {
		return false, nil
	}
	switch act := t.v.key(k); act.kind {
	case actQuit:
		return true, nil
	case actAttach:
		return t.attachKey(ctx, act.id)
	case actRead:
		t.want.output = true
		t.schedule(ctx)
	case actStop, actKill:
		t.stop(ctx, act)
	}
	return false, nil
}

// attachKey attaches to the job shown as id, and reports whether top
// ends, and with what error: on ctx's end, on SIGHUP, or when the terminal
// could not be taken back; otherwise the view says how the attach ended.
func (t *topSession) attachKey(ctx context.Context, id string) (quit bool, err error) {
	note, err := t.attach(ctx, id)
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return true, err // SIGHUP, or the terminal not taken back
	}
	t.v.note, t.v.err = note, err
	t.want.list = true
	t.schedule(ctx)
	return false, nil
}

// stop stops or kills the job of act without waiting for it: the loop
// goes on, and an error comes back on stopErrors.
func (t *topSession) stop(ctx context.Context, act topAction) {
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
			case t.stopErrors <- err:
			default:
			}
		}
	}()
}

// answer puts what a read brought into the view.
func (t *topSession) answer(ans topAnswer) {
	v := t.v
	v.err = ans.err
	if ans.err != nil {
		return
	}
	if !ans.want.ports {
		keepPorts(ans.jobs, v.jobs)
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

// keepPorts gives each job of jobs that still has live processes the
// ports it had in shown, for a read that did not look them up (see
// scanEvery): they are shown until the next look.
func keepPorts(jobs, shown []jobdir.Job) {
	had := make(map[string][]jobdir.Port, len(shown))
	for _, j := range shown {
		if len(j.Ports) > 0 {
			had[j.ID] = j.Ports
		}
	}
	for i, j := range jobs {
		if j.LiveProcesses > 0 && len(j.Ports) == 0 {
			jobs[i].Ports = had[j.ID]
		}
	}
}

// draw draws the screen when it has changed.
func (t *topSession) draw() {
	w, h := t.screen.Size()
	lines := t.v.render(w, h, time.Now())
	if key := fmt.Sprint(lines); key != t.drawn {
		drawTop(t.screen, lines)
		t.drawn = key
	}
}

// attach runs bgjob attach on the job shown as id, top's screen set
// aside meanwhile and drawn whole again after, and returns what to say
// of it.
func (t *topSession) attach(ctx context.Context, id string) (note string, err error) {
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
	// The terminal as top found it: tcell reads no key meanwhile, and
	// the keys typed after this one go to the job. attach makes it raw,
	// and restores it, itself. It draws on an alternate screen of its
	// own, as top does: the shell's is left as it was.
	if err := t.screen.Suspend(); err != nil {
		return "", fmt.Errorf("setting top's screen aside: %w", err)
	}
	fmt.Fprint(t.tty.Out, "\x1b[?1049h")
	defer func() {
		fmt.Fprint(t.tty.Out, "\x1b[?1049l")
		if rerr := t.screen.Resume(); rerr != nil {
			err = &ExitError{Code: 1, Err: fmt.Errorf("taking the terminal back: %w", rerr)}
			return
		}
		t.screen.Sync()
		t.drawn = ""
	}()
	end, err := Attach(ctx, c, job, t.tty, AttachOptions{DetachKey: topDetachKey, Stdin: true})
	switch {
	case err != nil:
		return "", err
	case end.Ended:
		return "job " + id + " " + jobtext.End(end.Job), nil
	}
	return "detached from job " + id + ", which runs on", nil
}

// topDetachKey is the key that detaches from a job attached to from top,
// attach's: Ctrl-\.
const topDetachKey = 0x1c
