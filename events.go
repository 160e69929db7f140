package bgjob

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// The kinds of an Event, in the order a job's events come.
const (
	// EventQueued: the job was queued behind a slot or another job.
	EventQueued = "queued"
	// EventStarted: the job's command started.
	EventStarted = "started"
	// EventReady: a line of the job's output matched its readiness
	// pattern (run --ready).
	EventReady = "ready"
	// EventMatched: lines of the job's output matched the pattern a
	// follow of the events was given (EventOptions.Match); seen as they
	// come, never derived again.
	EventMatched = "matched"
	// EventEnded: the job ended (exited, killed, lost or not run).
	EventEnded = "ended"
)

// eventOrder ranks the kinds of the events of one job at one time.
var eventOrder = map[string]int{EventQueued: 0, EventStarted: 1, EventReady: 2, EventMatched: 3, EventEnded: 4}

// Event is a change of a job's state: bgjob events prints each, and the
// MCP server's results carry those of its client's jobs. All but matched
// are derived from the job's files (JobEvents), so none is lost while
// nobody listens and no log of them is kept.
type Event struct {
	// Time is when it happened: queued_at and started_at by the clock
	// of the machine that ran bgjob (a queued job's start by the host's),
	// ended_at by the host's; a matched event's when the line was read.
	Time      time.Time `json:"time"`
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	Host      string    `json:"host"`
	Workspace string    `json:"workspace"`
	// Event is the kind: EventQueued, EventStarted, EventReady,
	// EventMatched or EventEnded.
	Event string `json:"event"`
	// Status is the job's status the event made: queued, running, or,
	// for ended, how it ended.
	Status jobdir.Status `json:"status"`
	// ExitCode, Reason and Signal are the ended job's (jobdir.Job's).
	ExitCode *int   `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Queued says what a queued job waits for, while it does.
	Queued string `json:"queued,omitempty"`
	// Duration is how long an ended job ran, in seconds, where known.
	Duration *float64 `json:"duration_sec,omitempty"`
	// Line is the matched line (the last of those folded into the
	// event), without its newline; Count the lines the event stands for.
	Line  string `json:"line,omitempty"`
	Count int    `json:"count,omitempty"`
	// Cursor is what ParseEventsSince takes to go on after this event
	// (EventsSince): with a follow's events, after every event delivered
	// up to this one.
	Cursor string `json:"cursor"`
}

// EventPos is a place in the order of events: by time, then job id, then
// kind. The zero EventPos is before every event; one without an ID is
// before every event of its time.
type EventPos struct {
	Time time.Time
	ID   string
	Kind int
}

func (p EventPos) compare(q EventPos) int {
	return cmp.Or(p.Time.Compare(q.Time), strings.Compare(p.ID, q.ID), cmp.Compare(p.Kind, q.Kind))
}

func (e Event) pos() EventPos { return EventPos{e.Time, e.ID, eventOrder[e.Event]} }

// String is the place as a cursor: NANOSECONDS.KIND.ID.
func (p EventPos) String() string {
	return fmt.Sprintf("%d.%d.%s", p.Time.UnixNano(), p.Kind, p.ID)
}

// EventsSince is where a reader of events goes on: after Mark, but for
// the events at Seen, which come after Mark and were delivered already.
// An event's file can appear after later events were read (a queued job's
// meta.json after another job's end, an end held back until a follow has
// read the job's output): a reader's cursor is the Mark below which every
// event has been delivered, and the events delivered above it.
type EventsSince struct {
	Mark EventPos
	Seen []EventPos
}

// after reports whether e comes after s: above Mark and not seen.
func (s EventsSince) after(e Event) bool {
	p := e.pos()
	if !s.Mark.Time.IsZero() && s.Mark.compare(p) >= 0 {
		return false
	}
	for _, q := range s.Seen {
		if q.compare(p) == 0 {
			return false
		}
	}
	return true
}

// String is the cursor: the mark's place, then each seen place after a ~.
func (s EventsSince) String() string {
	var b strings.Builder
	b.WriteString(s.Mark.String())
	for _, q := range s.Seen {
		b.WriteByte('~')
		b.WriteString(q.String())
	}
	return b.String()
}

// ParseEventsSince reads what bgjob events --since takes: the cursor of an
// event (the events after it), a time (RFC 3339), or a duration before now
// (10m: the events of the last ten minutes).
func ParseEventsSince(s string, now time.Time) (EventsSince, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return EventsSince{}, fmt.Errorf("%w: since %q: a duration must not be negative", ErrUsage, s)
		}
		return EventsSince{Mark: EventPos{Time: now.Add(-d)}}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return EventsSince{Mark: EventPos{Time: t}}, nil
	}
	places := strings.Split(s, "~")
	var since EventsSince
	for i, pl := range places {
		p, ok := parsePos(pl, i == 0)
		if !ok {
			return EventsSince{}, fmt.Errorf("%w: since %q: give a duration (10m), a time (2026-12-07T14:00:00Z) or the cursor of an event", ErrUsage, s)
		}
		if i == 0 {
			since.Mark = p
		} else {
			since.Seen = append(since.Seen, p)
		}
	}
	return since, nil
}

// parsePos reads NANOSECONDS.KIND.ID; a mark may have no ID.
func parsePos(s string, mark bool) (EventPos, bool) {
	ns, rest, ok1 := strings.Cut(s, ".")
	kind, id, ok2 := strings.Cut(rest, ".")
	n, err1 := strconv.ParseInt(ns, 10, 64)
	k, err2 := strconv.Atoi(kind)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || k < 0 || k >= len(eventOrder) || !(jobdir.IsID(id) || mark && id == "") {
		return EventPos{}, false
	}
	return EventPos{Time: time.Unix(0, n), ID: id, Kind: k}, true
}

// JobEvents returns the events of j that its files tell, oldest first:
// queued, started, ready and ended, each where j has it. A job that ended
// without an end time (lost) has its ended event at the last time it is
// known for. A job that cannot be read has none.
func JobEvents(j jobdir.Job) []Event {
	if j.Status == jobdir.StatusUnreadable || j.ID == "" {
		return nil
	}
	var evs []Event
	add := func(kind string, t time.Time, st jobdir.Status) *Event {
		evs = append(evs, Event{Time: t, ID: j.ID, Name: j.Name, Host: j.Host, Workspace: j.Workspace, Event: kind, Status: st})
		return &evs[len(evs)-1]
	}
	last := time.Time{}
	if j.QueuedAt != nil {
		e := add(EventQueued, *j.QueuedAt, jobdir.StatusQueued)
		if j.Status == jobdir.StatusQueued {
			e.Queued = j.Queued
		}
		last = *j.QueuedAt
	}
	if !j.StartedAt.IsZero() && j.Status != jobdir.StatusNotRun {
		add(EventStarted, j.StartedAt, jobdir.StatusRunning)
		last = j.StartedAt
	}
	if j.ReadyAt != nil {
		// ready_at is when its reader saw the line, which can be after
		// the job's end (a reader over a slow connection, another
		// clock): a job is ready before it ends.
		t := *j.ReadyAt
		if j.EndedAt != nil && t.After(*j.EndedAt) {
			t = *j.EndedAt
		}
		add(EventReady, t, jobdir.StatusRunning)
		if t.After(last) {
			last = t
		}
	}
	if j.Status.Ended() {
		t := last
		if j.EndedAt != nil {
			t = *j.EndedAt
		}
		e := add(EventEnded, t, j.Status)
		e.ExitCode, e.Reason, e.Signal = j.ExitCode, j.Reason, j.Signal
		if d, ok := j.Duration(time.Time{}); ok {
			s := d.Round(time.Millisecond).Seconds()
			e.Duration = &s
		}
	}
	for i := range evs {
		evs[i].Cursor = evs[i].pos().String()
	}
	return evs
}

// sortEvents orders events by their place (EventPos).
func sortEvents(evs []Event) {
	slices.SortStableFunc(evs, func(a, b Event) int { return a.pos().compare(b.pos()) })
}
