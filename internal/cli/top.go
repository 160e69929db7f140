package cli

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
	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

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
first, kept current. On this machine file events say when a job is made,
ends or is removed; every second (--interval) top looks, without running
a script, for a running job's wrapper gone without one (killed with
KILL), and every ten seconds (or --interval, when longer) it counts again
the live processes of the jobs that may still change. Over SSH the whole
table is read every second. A job that ends changes on screen at once
locally, within two seconds over SSH.

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
	cmd.Flags().DurationVar(&o.every, "interval", topEvery, "how often to read the jobs again (locally: to look for a wrapper gone)")
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
	t := &topSession{a: a, c: c, o: o, in: in, out: out, screen: screen, v: &topView{color: !o.noColor, all: o.all}}
	return t.run(ctx)
}

// topSession is one run of top: the view, and what keeps it current.
type topSession struct {
	a       *app
	c       *bgjob.Client
	o       topOptions
	in, out *os.File
	screen  tcell.Screen
	v       *topView
	drawn   string // the screen last drawn, as fmt prints its lines
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
	c, v := t.c, t.v
	events := make(chan tcell.Event, 16)
	go t.screen.ChannelEvents(events, ctx.Done())
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
		lastScan   time.Time // the start of the last read of the jobs
		scanEvery  = max(topScanEvery, t.o.every)
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
		if w.list || w.jobs {
			lastScan = lastRead
		}
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
		case <-redraw.C:
		case <-tick.C:
			switch {
			case watching:
				want.jobs = want.jobs || tickReads(live(v.jobs), time.Since(lastScan), scanEvery, c.MayHaveEnded)
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
		case ev, ok := <-events:
			if !ok {
				// ctx's end, or the screen is gone.
				return ctx.Err()
			}
			var k string
			switch ev := ev.(type) {
			case *tcell.EventResize:
				t.screen.Sync()
			case *tcell.EventKey:
				k = topKey(ev)
			}
			if k == "" {
				break
			}
			switch act := v.key(k); act.kind {
			case actQuit:
				return nil
			case actAttach:
				note, err := t.attach(ctx, act.id)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var ee *exitError
				if errors.As(err, &ee) {
					return err // SIGHUP, or the terminal not taken back
				}
				v.note, v.err = note, err
				want.list = true
				schedule()
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
	fmt.Fprint(t.out, "\x1b[?1049h")
	defer func() {
		fmt.Fprint(t.out, "\x1b[?1049l")
		if rerr := t.screen.Resume(); rerr != nil {
			err = &exitError{code: 1, err: fmt.Errorf("taking the terminal back: %w", rerr)}
			return
		}
		t.screen.Sync()
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
