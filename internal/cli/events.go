package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

type eventsOptions struct {
	bgjob.EventOptions
	refs        []string
	labels      []string
	status      string
	since       string
	maxEvents   int
	idleTimeout time.Duration
}

// errEventsDone ends a follow that got what it asked for (--max-events,
// --idle-timeout): not an error.
var errEventsDone = errors.New("events: done")

func (a *app) eventsCommand() *cobra.Command {
	var o eventsOptions
	long, example := help("events")
	cmd := &cobra.Command{
		Use:     "events [ID...]",
		Short:   "Print the state changes of jobs: queued, started, ready, matched, ended",
		Long:    long,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.refs = args
			if o.status != "" {
				st, err := jobdir.ParseStatus(o.status)
				if err != nil {
					return usageError("--status: %v", err)
				}
				o.Status = st
			}
			var err error
			if o.Labels, err = parseLabels(o.labels); err != nil {
				return err
			}
			if len(args) > 0 && o.status != "" {
				return usageError("--status selects jobs without IDs: give one or the other")
			}
			if len(args) > 0 && len(o.Labels) > 0 {
				return usageError("--label selects jobs without IDs: give one or the other")
			}
			if len(args) > 0 && o.AllWorkspaces {
				return usageError("-A selects jobs without IDs: give one or the other")
			}
			if o.since != "" {
				p, err := bgjob.ParseEventsSince(o.since, time.Now())
				if err != nil {
					return err
				}
				o.Since = p
			}
			if o.maxEvents < 0 || o.idleTimeout < 0 {
				return usageError("--max-events and --idle-timeout must not be negative")
			}
			if !o.Follow && (o.Match != "" || o.UntilDone || o.maxEvents > 0 || o.idleTimeout > 0) {
				return usageError("--match, --until-done, --max-events and --idle-timeout go with --follow")
			}
			return a.runEvents(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.status, "status", "", "only jobs with this status now (running, queued, exited, killed, lost, not_run)")
	f.BoolVarP(&o.AllWorkspaces, "all-workspaces", "A", false, "the jobs of every workspace")
	labelFilter(f, &o.labels)
	f.StringVar(&o.since, "since", "", "only events after this: a duration (10m), a time (RFC 3339) or the cursor of an event")
	f.BoolVarP(&o.Follow, "follow", "f", false, "go on printing events as they come")
	f.StringVar(&o.Match, "match", "", "with --follow, a matched event for lines of running jobs' output matching this POSIX ERE")
	f.BoolVar(&o.UntilDone, "until-done", false, "with --follow, end once every selected job has ended")
	f.IntVar(&o.maxEvents, "max-events", 0, "with --follow, end after this many events (0: no limit)")
	f.DurationVar(&o.idleTimeout, "idle-timeout", 0, "with --follow, end after this long without an event (0: never)")
	f.BoolVar(&a.json, "json", false, "print one JSON object a line")
	return cmd
}

// runEvents prints the events of each host as they come.
func (a *app) runEvents(ctx context.Context, o eventsOptions) error {
	left := func() bool { return false }
	if o.Follow {
		// A follow ends when its reader goes (events -f | head -1): at
		// once, not at the write of the next event, and with 0.
		defer quietPipe()()
		var stop func()
		ctx, left, stop = whileRead(ctx, a.stdout)
		defer stop()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p := &eventPrinter{a: a, all: o.AllWorkspaces}
	var idle *time.Timer
	if o.idleTimeout > 0 {
		idle = time.AfterFunc(o.idleTimeout, func() { cancel(errEventsDone) })
		defer idle.Stop()
	}
	res := a.fleet(a.limit(0)).Events(ctx, o.refs, o.EventOptions, func(host string, e bgjob.Event) error {
		if idle != nil {
			idle.Reset(o.idleTimeout)
		}
		if err := p.print(host, e); err != nil {
			return err
		}
		if o.maxEvents > 0 && p.n >= o.maxEvents {
			return errEventsDone
		}
		return nil
	})
	done := errors.Is(context.Cause(ctx), errEventsDone) || left()
	for i := range res {
		err := res[i].Err
		if errors.Is(err, errEventsDone) || done && errors.Is(err, context.Canceled) || o.Follow && errors.Is(err, syscall.EPIPE) {
			res[i].Err = nil
		}
	}
	if o.Follow {
		pardonPipe(a.stdout)
	}
	return failures(a, res)
}

// eventPrinter prints events: a JSON object a line, or a line of columns
// (TIME ID NAME EVENT DETAIL, HOST first with several hosts), each at once.
type eventPrinter struct {
	a   *app
	all bool // with -A: a WORKSPACE column after the time
	mu  sync.Mutex
	n   int
}

func (p *eventPrinter) print(host string, e bgjob.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.a.many() || e.Host == "" {
		e.Host = p.a.hostName(host)
	}
	if p.a.json {
		return encodeJSON(p.a.stdout, e, "", false)
	}
	name := e.Name
	if name == "" {
		name = "-"
	}
	ws := ""
	if p.all {
		ws = fmt.Sprintf("%-10s  ", e.Workspace)
	}
	_, err := fmt.Fprintf(p.a.stdout, "%s%s  %s%s  %-12s  %-7s  %s\n", p.a.hostPrefix(host), e.Time.Local().Format(time.DateTime), ws, e.ID, name, e.Event, eventDetail(e))
	return err
}

// eventDetail is the DETAIL column of an event.
func eventDetail(e bgjob.Event) string {
	switch e.Event {
	case bgjob.EventQueued:
		if e.Queued != "" {
			return "waits for " + e.Queued
		}
	case bgjob.EventMatched, bgjob.EventReady:
		if e.Count > 1 {
			return fmt.Sprintf("%s (%d lines)", e.Line, e.Count)
		}
		return e.Line
	case bgjob.EventEnded:
		s := jobtext.End(jobdir.Job{Status: e.Status, ExitCode: e.ExitCode, Signal: e.Signal})
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		if e.Duration != nil {
			s += " after " + jobtext.Duration(time.Duration(*e.Duration*float64(time.Second)))
		}
		return s
	}
	return ""
}
