package bgjob

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/termtext"
)

// EventOptions picks the events Events reports.
type EventOptions struct {
	// Status and AllWorkspaces select the jobs without refs, as List's;
	// a follow keeps a job Status selected once it has seen it so, so
	// that its end is told.
	Status        jobdir.Status
	AllWorkspaces bool
	// Labels, unless empty, selects without refs only the jobs that have
	// every one of these labels (ListOptions.Labels).
	Labels map[string]string
	// Since: only the events after this place (ParseEventsSince; zero:
	// every event the jobs' files tell).
	Since EventsSince
	// Follow reports the events as they come, until ctx ends, UntilDone
	// holds, or emit returns an error.
	Follow bool
	// Match, with Follow, a POSIX extended regular expression (as
	// wait --for takes it): each line of a running job's output that it
	// matches is a matched event, at most one a second for each job
	// (Count says how many lines each stands for), read from where the
	// log was when the follow began to see the job (from its start for
	// a job started since).
	Match string
	// UntilDone ends a follow once every selected job has ended (at once
	// when none is selected).
	UntilDone bool
}

// eventsTick is how often a follow on this machine looks at the jobs
// while one of them runs, for a wrapper killed without a trace (no file
// changes for it); an idle workspace is not looked at without a file
// event. Over SSH, where no file event comes, a script on the host
// watches the jobs (watchHost); the follow looks every eventsPoll only
// while that watch cannot run.
const (
	eventsTick = 5 * time.Second
	eventsPoll = 2 * time.Second
	// matchEvery: at most one matched event a second for each job.
	matchEvery = time.Second
	// eventsSettle is how long after its time an event's file is taken to
	// have appeared (a queued job's meta.json, an end's exit_code): a
	// cursor's mark stays that far behind the look, and lists the events
	// delivered above it (EventsSince).
	eventsSettle = 5 * time.Second
)

// Events reports to emit the events of the jobs refs name (none: the
// workspace's, as List selects them with o's Status and AllWorkspaces),
// oldest first, after o.Since. Without o.Follow it returns once those the
// jobs' files tell are reported; with it, it goes on with each new one,
// waking on file events on this machine (and every eventsTick while a
// job runs, for one killed without a trace), and elsewhere on the
// reports of one script on the host that watches the jobs' files and
// wrappers, for as long as the follow lasts. Within a follow each event is reported once, whatever order
// the files tell them in. An error of emit ends it and is returned.
func (c *Client) Events(ctx context.Context, refs []string, o EventOptions, emit func(Event) error) error {
	var re *regexp.Regexp
	if o.Match != "" {
		var err error
		if re, err = CompileERE(o.Match); err != nil {
			return err
		}
	}
	f := &eventsFollow{c: c, refs: refs, o: o, emit: emit, re: re, seen: map[string]bool{}, selected: map[string]bool{},
		matches: make(chan Event, 64), followers: map[string]*follower{}, began: time.Now()}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		f.wg.Wait()
	}()
	return f.run(ctx)
}

type eventsFollow struct {
	c     *Client
	refs  []string
	o     EventOptions
	emit  func(Event) error
	re    *regexp.Regexp
	began time.Time
	// seen holds the events reported (id and kind) in this follow.
	seen map[string]bool
	// matches carries the matched lines the followers read.
	matches   chan Event
	followers map[string]*follower
	wg        sync.WaitGroup
	// pending holds, for each job, the matched event waiting for its
	// second to pass; last when the job's last matched event went out.
	pending map[string]*Event
	last    map[string]time.Time
	// looked: the refs were found once.
	looked bool
	// lookStart is when the last look began; printed the places of the
	// derived events delivered; held the first place of those held back
	// (an end waiting for its follower), nil when none is.
	lookStart time.Time
	printed   []EventPos
	held      *EventPos
	// selected holds the jobs a follow has seen with Status.
	selected map[string]bool
}

// follower reads one running job's output for matched events.
type follower struct {
	done chan struct{}
}

func (f *eventsFollow) run(ctx context.Context) error {
	f.pending, f.last = map[string]*Event{}, map[string]time.Time{}
	var (
		files    <-chan string
		jobsCh   <-chan struct{}
		endFiles = func() {}
		filesKey string
		watching bool
	)
	defer func() { endFiles() }()
	// host: a runtime that is not a Watcher, where one script on the host
	// watches the jobs, its session opened beside the first look, which
	// is not held back for it: its first report brings a look that sees
	// what changed before it watched. (Opened after the first look, it
	// and that look would compete with the followers' first reads, which
	// start from where the logs are when they begin.)
	jobsCh = f.hostWatch(ctx)
	host := jobsCh != nil
	// local: the runtime is a Watcher, whose watch of the workspace may
	// come once the workspace is made.
	local := false
	watchJobs := func() {
		ch, err := f.c.WatchJobs(ctx, f.o.AllWorkspaces)
		local = local || err != nil || ch != nil
		if err == nil && ch != nil {
			watching, jobsCh = true, ch
		}
	}
	if f.o.Follow && len(f.refs) == 0 {
		watchJobs()
	}
	for {
		if f.o.Follow && len(f.refs) == 0 && local && jobsCh == nil {
			// The workspace made since? Then events come; the look
			// after the watch sees what came before it.
			watchJobs()
		}
		jobs, err := f.look(ctx)
		if err != nil {
			return err
		}
		if err := f.report(ctx, jobs); err != nil {
			return err
		}
		if !f.o.Follow {
			return nil
		}
		if f.o.UntilDone && allEnded(jobs) && len(f.followers) == 0 && len(f.pending) == 0 {
			return nil
		}
		// Watch the files of the jobs not ended, when they are others
		// than those watched; then look once more: what changed before
		// the watch was in place it could not see.
		unended, key := unendedJobs(jobs)
		if key != filesKey && (watching || len(f.refs) > 0) {
			endFiles()
			fctx, fcancel := context.WithCancel(ctx)
			endFiles, filesKey = fcancel, key
			files, err = f.c.WatchFiles(fctx, unended)
			if err != nil {
				files, filesKey = nil, ""
			}
			if files != nil {
				watching = true
				continue
			}
		}
		if err := f.sleep(ctx, jobsCh, files, jobs, watching, host); err != nil {
			return err
		}
	}
}

// hostWatch runs, for a follow on a runtime that is not a Watcher, the
// host's watch of the jobs (Client.watchHost) until ctx ends, and returns
// the channel of its reports, merged while the loop is busy; nil for
// none.
func (f *eventsFollow) hostWatch(ctx context.Context) <-chan struct{} {
	if !f.o.Follow {
		return nil
	}
	watch := f.c.watchHost(f.refs, f.o.AllWorkspaces)
	if watch == nil {
		return nil
	}
	changed := make(chan struct{}, 1)
	f.wg.Go(func() {
		watch(ctx, func() {
			select {
			case changed <- struct{}{}:
			default: // one is already waiting
			}
		})
	})
	return changed
}

// sleep waits for what may have changed: a file event or a report of the
// host's watch, a matched line, a matched event's second passing, a
// follower's end, or the tick: on this machine while a job runs, for a
// wrapper killed without a trace (the host's watch looks at wrappers
// itself); without a watch, the poll.
func (f *eventsFollow) sleep(ctx context.Context, jobsCh <-chan struct{}, files <-chan string, jobs []jobdir.Job, watching, host bool) error {
	var tick <-chan time.Time
	switch {
	case host:
	case !watching:
		tick = time.After(eventsPoll)
	case hasRunning(jobs):
		tick = time.After(eventsTick)
	}
	ended, now := f.followerEnded()
	if now {
		return nil
	}
	flush := f.flushTimer()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-jobsCh:
			return nil
		case name := <-files:
			if !eventFile(name) {
				continue
			}
			return nil
		case <-tick:
			if watching && !f.c.MayHaveEnded(runningJobs(jobs)) {
				tick = time.After(eventsTick)
				continue
			}
			return nil
		case m := <-f.matches:
			if err := f.matched(m); err != nil {
				return err
			}
			flush = f.flushTimer()
		case <-flush:
			if err := f.flushDue(time.Now(), ""); err != nil {
				return err
			}
			flush = f.flushTimer()
		case <-ended:
			return nil
		}
	}
}

// eventFile reports whether a change of the job file name may make an
// event: not the logs (the followers read them), nor a file written on
// the way to another (an earlier wrapper's ended_at came before
// exit_code, which tells the end), nor a reader's cursor.
func eventFile(name string) bool {
	switch {
	case name == jobdir.StdoutFile, name == jobdir.StderrFile, name == jobdir.EndedFile, name == "leftovers",
		strings.Contains(name, ".tmp"), strings.HasPrefix(name, "cursor-"):
		return false
	}
	return true
}

// followerEnded returns the end of a follower's reading to wait on, or
// now when one has ended already: the loop then looks at once, for all.
func (f *eventsFollow) followerEnded() (ended chan struct{}, now bool) {
	for _, fl := range f.followers {
		select {
		case <-fl.done:
			return nil, true
		default:
		}
		ended = fl.done // one is enough: the loop looks again for all
	}
	return ended, false
}

// flushTimer fires when the first pending matched event is due (nil:
// none is pending).
func (f *eventsFollow) flushTimer() <-chan time.Time {
	if next, ok := f.nextFlush(); ok {
		return time.After(time.Until(next))
	}
	return nil
}

// look reads the selected jobs.
func (f *eventsFollow) look(ctx context.Context) ([]jobdir.Job, error) {
	f.lookStart = time.Now()
	if len(f.refs) > 0 {
		jobs, err := f.c.Status(ctx, f.refs...)
		if f.looked {
			// A job removed since the first look has no more events.
			err = IgnoreNotFound(err)
		}
		f.looked = f.looked || err == nil
		return jobs, err
	}
	var jobs []jobdir.Job
	lo := ListOptions{Status: f.o.Status, AllWorkspaces: f.o.AllWorkspaces, Labels: f.o.Labels, SkipRunningCount: true}
	if f.o.Follow {
		// A job once selected by its status stays, for its end.
		lo.Status = ""
	}
	_, err := f.c.ListFunc(ctx, lo, func(j jobdir.Job) error {
		if f.o.Follow && f.o.Status != "" {
			if j.Status != f.o.Status && !f.selected[j.ID] {
				return nil
			}
			f.selected[j.ID] = true
		}
		jobs = append(jobs, j)
		return nil
	})
	return jobs, err
}

// report emits the events of jobs not reported yet, oldest first; a job's
// ended event waits for its follower to have read the job's output to its
// end, so that its matched events come first.
func (f *eventsFollow) report(ctx context.Context, jobs []jobdir.Job) error {
	var evs []Event
	f.held = nil
	for _, j := range jobs {
		if f.re != nil && f.o.Follow && f.mayFollow(j) {
			f.follow(ctx, j)
		}
		fl := f.followers[j.ID]
		if fl != nil {
			select {
			case <-fl.done:
				delete(f.followers, j.ID)
				fl = nil
			default:
			}
		}
		for _, e := range JobEvents(j) {
			key := e.ID + " " + e.Event
			if f.seen[key] || !f.o.Since.after(e) {
				continue
			}
			if e.Event == EventEnded && fl != nil {
				// Once the follower has read to the end; the cursors
				// given meanwhile stay below it.
				if p := e.pos(); f.held == nil || p.compare(*f.held) < 0 {
					f.held = &p
				}
				continue
			}
			evs = append(evs, e)
		}
	}
	sortEvents(evs)
	// The matched lines read meanwhile come before what the jobs' files
	// tell now.
	if err := f.drainMatches(); err != nil {
		return err
	}
	for _, e := range evs {
		if e.Event == EventEnded {
			if err := f.flushDue(time.Time{}, e.ID); err != nil {
				return err
			}
		}
		f.seen[e.ID+" "+e.Event] = true
		p := e.pos()
		f.printed = append(f.printed, p)
		e.Cursor = f.cursor(&p)
		if err := f.emit(e); err != nil {
			return err
		}
	}
	return nil
}

// mayFollow reports whether j's output is to be read for matched events:
// a running job, or one that ended between two looks after the follow
// began (its output is read whole before its end is told).
func (f *eventsFollow) mayFollow(j jobdir.Job) bool {
	switch {
	case j.Status == jobdir.StatusRunning:
		return true
	case j.Status.Ended() && !f.seen[j.ID+" "+EventEnded] && !j.StartedAt.IsZero() && !j.StartedAt.Before(f.began):
		return f.o.Follow
	}
	return false
}

// cursor is the cursor of an event delivered now (at, for a derived
// event, its place; nil for a matched one): a mark below every event not
// delivered yet that this follow knows of or may still find (eventsSettle
// before the last look), never below the mark the follow began after,
// and the places delivered above it.
func (f *eventsFollow) cursor(at *EventPos) string {
	w := EventPos{Time: f.lookStart.Add(-eventsSettle)}
	for _, p := range []*EventPos{f.held, at} {
		if p != nil && p.compare(w) < 0 {
			w = EventPos{Time: p.Time}
		}
	}
	if f.o.Since.Mark.compare(w) > 0 {
		w = f.o.Since.Mark
	}
	since := EventsSince{Mark: w}
	for _, ps := range [][]EventPos{f.o.Since.Seen, f.printed} {
		for _, p := range ps {
			if p.compare(w) > 0 {
				since.Seen = append(since.Seen, p)
			}
		}
	}
	// The places long below the mark are needed no more.
	if len(f.printed) > 1024 {
		f.printed = slices.DeleteFunc(f.printed, func(p EventPos) bool { return p.Time.Before(w.Time.Add(-time.Minute)) })
	}
	return since.String()
}

// follow starts, once for each job, the reading of j's output for matched
// events: from where its logs are now for a job that ran before the
// follow began, else from their start.
func (f *eventsFollow) follow(ctx context.Context, j jobdir.Job) {
	if _, ok := f.followers[j.ID]; ok || f.seen[j.ID+" follow"] {
		return
	}
	f.seen[j.ID+" follow"] = true
	fl := &follower{done: make(chan struct{})}
	f.followers[j.ID] = fl
	c := f.c
	if j.Workspace != "" && j.Workspace != c.workspace {
		if wc, err := c.InWorkspace(j.Workspace); err == nil {
			c = wc
		}
	}
	o := LogOptions{Follow: true}
	if j.StartedAt.Before(f.began) {
		o.Bytes = Zero // from where the logs are now
	}
	f.wg.Go(func() {
		defer close(fl.done)
		send := func(line []byte) {
			e := Event{Time: time.Now(), ID: j.ID, Name: j.Name, Host: j.Host, Workspace: j.Workspace,
				Event: EventMatched, Status: jobdir.StatusRunning, Line: string(line), Count: 1}
			select {
			case f.matches <- e:
			case <-ctx.Done():
			}
		}
		out := &lineMatcher{re: f.re, pty: j.PTY, send: send}
		errOut := &lineMatcher{re: f.re, pty: j.PTY, send: send}
		c.Logs(ctx, j.ID, o, out, errOut)
		out.end()
		errOut.end()
	})
}

// lineMatcher sends each whole line written to it that re matches.
type lineMatcher struct {
	re   *regexp.Regexp
	pty  bool
	send func([]byte)
	buf  []byte
}

// maxMatchLine: a line longer is matched on its first bytes.
const maxMatchLine = 64 << 10

func (m *lineMatcher) Write(p []byte) (int, error) {
	m.buf = append(m.buf, p...)
	for {
		i := bytes.IndexByte(m.buf, '\n')
		if i < 0 {
			break
		}
		m.line(m.buf[:i])
		m.buf = m.buf[i+1:]
	}
	if len(m.buf) > maxMatchLine {
		m.line(m.buf)
		m.buf = m.buf[:0]
	}
	return len(p), nil
}

func (m *lineMatcher) end() {
	if len(m.buf) > 0 {
		m.line(m.buf)
		m.buf = nil
	}
}

func (m *lineMatcher) line(b []byte) {
	if m.pty {
		b = bytes.ReplaceAll(termtext.Strip(b), []byte("\r"), nil)
	}
	b = bytes.TrimSuffix(b, []byte("\r"))
	if m.re.Match(b) {
		m.send(bytes.Clone(b))
	}
}

// matched takes a matched line: reported at once when its job's last
// matched event is a second old, else folded into the one pending.
func (f *eventsFollow) matched(m Event) error {
	if p := f.pending[m.ID]; p != nil {
		p.Count++
		p.Line, p.Time = m.Line, m.Time
		return nil
	}
	if time.Since(f.last[m.ID]) >= matchEvery {
		return f.emitMatched(m)
	}
	f.pending[m.ID] = &m
	return nil
}

func (f *eventsFollow) emitMatched(m Event) error {
	f.last[m.ID] = time.Now()
	m.Cursor = f.cursor(nil)
	return f.emit(m)
}

// drainMatches takes the matched lines read so far.
func (f *eventsFollow) drainMatches() error {
	for {
		select {
		case m := <-f.matches:
			if err := f.matched(m); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// nextFlush is when the first pending matched event is due.
func (f *eventsFollow) nextFlush() (time.Time, bool) {
	var next time.Time
	for id := range f.pending {
		if t := f.last[id].Add(matchEvery); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next, !next.IsZero()
}

// flushDue reports the pending matched events that are due at now, and
// that of job id whatever the time (an ended event follows it).
func (f *eventsFollow) flushDue(now time.Time, id string) error {
	if id != "" {
		if err := f.drainMatches(); err != nil {
			return err
		}
	}
	for pid, p := range f.pending {
		if pid != id && (now.IsZero() || f.last[pid].Add(matchEvery).After(now)) {
			continue
		}
		delete(f.pending, pid)
		if err := f.emitMatched(*p); err != nil {
			return err
		}
	}
	return nil
}

func allEnded(jobs []jobdir.Job) bool {
	for _, j := range jobs {
		if !j.Status.Ended() {
			return false
		}
	}
	return true
}

func hasRunning(jobs []jobdir.Job) bool { return len(runningJobs(jobs)) > 0 }

func runningJobs(jobs []jobdir.Job) []jobdir.Job {
	var r []jobdir.Job
	for _, j := range jobs {
		if j.Status == jobdir.StatusRunning {
			r = append(r, j)
		}
	}
	return r
}

// unendedJobs returns the jobs not ended, and a key that names them.
func unendedJobs(jobs []jobdir.Job) ([]jobdir.Job, string) {
	var (
		u   []jobdir.Job
		key strings.Builder
	)
	for _, j := range jobs {
		if !j.Status.Ended() {
			u = append(u, j)
			key.WriteString(j.Dir)
			key.WriteByte(0)
		}
	}
	return u, key.String()
}

// Events reports the events of every host (Client.Events) to emit, with
// the host as given to NewFleet, as they come: emit is called from one
// host at a time. The fleet's host timeout bounds each host's first
// answer, as for Wait.
func (f *Fleet) Events(ctx context.Context, refs []string, o EventOptions, emit func(host string, e Event) error) []Result[struct{}] {
	var mu sync.Mutex
	return eachWaiting(ctx, f, func(ctx context.Context, host string, c *Client) (struct{}, error) {
		return struct{}{}, c.Events(ctx, refs, o, func(e Event) error {
			mu.Lock()
			defer mu.Unlock()
			return emit(host, e)
		})
	})
}
