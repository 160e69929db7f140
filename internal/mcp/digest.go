package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/internal/jobtext"
	"github.com/bgjob/bgjob/jobdir"
)

// digestBound bounds the look at the client's jobs that each tool result
// makes: a host that does not answer within it is looked at again at the
// next call, and the result goes out without its events.
const digestBound = 2 * time.Second

// digest tells the client, in every tool result, what changed since its
// previous call for the jobs it started through this server: those that
// ended (not run included) or became ready, in an events field and one
// line of text. No MCP notification starts a model's turn in today's
// clients; the next tool result reaches every one of them.
type digest struct {
	mu sync.Mutex
	// jobs holds, by host, the jobs started and not told ended, as last
	// seen (a zero Job before the first look).
	jobs map[string]map[string]jobdir.Job
	// told holds the events told (id and kind).
	told map[string]bool
	// calls counts the starts, for a call to find the jobs it started.
	starts int
	order  map[string]int
}

// started records a job this client started on host.
func (d *digest) started(host, id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jobs == nil {
		d.jobs, d.told, d.order = map[string]map[string]jobdir.Job{}, map[string]bool{}, map[string]int{}
	}
	if d.jobs[host] == nil {
		d.jobs[host] = map[string]jobdir.Job{}
	}
	d.jobs[host][id] = jobdir.Job{}
	d.starts++
	d.order[id] = d.starts
}

// unended returns the jobs started on host not known to have ended.
func (d *digest) unended(host string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []string
	for id := range d.jobs[host] {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return d.order[ids[a]] < d.order[ids[b]] })
	return ids
}

// shown records that a result showed jobs as they stand: the ended events
// of those that ended are told.
func (d *digest) shown(host string, jobs []jobdir.Job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range jobs {
		if _, ok := d.jobs[host][j.ID]; !ok || !j.Status.Ended() {
			continue
		}
		d.told[j.ID+" "+bgjob.EventEnded] = true
		delete(d.jobs[host], j.ID)
	}
}

// forget drops the jobs of host that no longer exist (removed before
// their end was told).
func (d *digest) forget(host string, ids []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		delete(d.jobs[host], id)
	}
}

// mark is where the starts are at: the jobs started after it are those
// of a call under way.
func (d *digest) mark() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.starts
}

// collect looks at the jobs not told ended and returns their events not
// told yet (ready, ended), oldest first. The jobs started after mark (by
// the call whose result this is) are not told of: that result says how
// they stand; their events so far count as told.
func (d *digest) collect(ctx context.Context, s *Server, mark int) []bgjob.Event {
	d.mu.Lock()
	hosts := map[string][]jobdir.Job{}
	for h, jobs := range d.jobs {
		for id, j := range jobs {
			if j.ID == "" {
				j.ID = id
			}
			hosts[h] = append(hosts[h], j)
		}
	}
	d.mu.Unlock()
	if len(hosts) == 0 {
		return nil
	}
	looked := lookAt(ctx, s, hosts)
	d.mu.Lock()
	defer d.mu.Unlock()
	var evs []bgjob.Event
	for h, jobs := range looked {
		for _, j := range jobs {
			if _, ok := d.jobs[h][j.ID]; !ok || j.ID == "" {
				continue
			}
			d.jobs[h][j.ID] = j
			quiet := d.order[j.ID] > mark
			for _, e := range bgjob.JobEvents(j) {
				if e.Event != bgjob.EventEnded && e.Event != bgjob.EventReady {
					continue
				}
				key := e.ID + " " + e.Event
				if d.told[key] {
					continue
				}
				d.told[key] = true
				if !quiet {
					// As the call named it, "" for this machine,
					// as job_list's rows have it.
					e.Host = h
					evs = append(evs, e)
				}
			}
			if j.Status.Ended() {
				delete(d.jobs[h], j.ID)
			}
		}
	}
	sortByTime(evs)
	return evs
}

// lookAt reads, on each host and within digestBound, the jobs that may
// have changed: on this machine those whose wrapper may have ended
// (MayHaveEnded), elsewhere all. A host that does not answer in time is
// left out.
func lookAt(ctx context.Context, s *Server, hosts map[string][]jobdir.Job) map[string][]jobdir.Job {
	ctx, cancel := context.WithTimeout(ctx, digestBound)
	defer cancel()
	var (
		mu     sync.Mutex
		looked = map[string][]jobdir.Job{}
		wg     sync.WaitGroup
	)
	for h, jobs := range hosts {
		wg.Go(func() {
			c, _, err := s.client(ctx, h)
			if err != nil {
				return
			}
			var look []string
			for _, j := range jobs {
				if j.Status == "" || c.MayHaveEnded([]jobdir.Job{j}) {
					look = append(look, j.ID)
				}
			}
			if len(look) == 0 {
				return
			}
			// The states only: a job still running is not scanned for.
			got, err := c.StatusWith(ctx, bgjob.StatusOptions{SkipRunningCount: true}, look...)
			if bgjob.IgnoreNotFound(err) == nil {
				// A job removed before its end was told: nothing
				// more to tell of it.
				s.digest.forget(h, missing(look, got))
			}
			mu.Lock()
			looked[h] = got
			mu.Unlock()
		})
	}
	wg.Wait()
	return looked
}

// missing returns the ids of refs that jobs do not hold.
func missing(ids []string, jobs []jobdir.Job) []string {
	var m []string
	for _, id := range ids {
		if !slices.ContainsFunc(jobs, func(j jobdir.Job) bool { return j.ID == id }) {
			m = append(m, id)
		}
	}
	return m
}

func sortByTime(evs []bgjob.Event) {
	slices.SortStableFunc(evs, func(a, b bgjob.Event) int { return a.Time.Compare(b.Time) })
}

// digestLine is the line of text that tells events: "since your last
// call: job build exited 2 after 41s; job web is ready".
func digestLine(evs []bgjob.Event) string {
	var parts []string
	for _, e := range evs {
		name := e.Name
		if name == "" {
			name = e.ID
		}
		switch e.Event {
		case bgjob.EventReady:
			parts = append(parts, fmt.Sprintf("job %s is ready", name))
		case bgjob.EventEnded:
			s := jobtext.End(jobdir.Job{Status: e.Status, ExitCode: e.ExitCode, Signal: e.Signal})
			if e.Reason != "" {
				s += " (" + e.Reason + ")"
			}
			if e.Duration != nil {
				s += " after " + jobtext.Duration(time.Duration(*e.Duration*float64(time.Second)))
			}
			parts = append(parts, fmt.Sprintf("job %s %s", name, s))
		}
	}
	return "since your last call: " + strings.Join(parts, "; ")
}

// tell is the middleware that adds the digest to every tool result.
func (s *Server) tell(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		mark := s.digest.mark()
		res, err := next(ctx, method, req)
		r, ok := res.(*sdk.CallToolResult)
		if err != nil || !ok || r == nil || r.IsError {
			// An error has no structured content to carry events: the
			// next result tells them.
			return res, err
		}
		evs := s.digest.collect(ctx, s, mark)
		if len(evs) == 0 {
			return res, err
		}
		r.Content = append(r.Content, &sdk.TextContent{Text: digestLine(evs)})
		if r.StructuredContent != nil {
			r.StructuredContent = withEvents(r.StructuredContent, evs)
		}
		return r, nil
	}
}

// withEvents returns the structured content v with an events field.
func withEvents(v any, evs []bgjob.Event) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return v
	}
	m["events"] = evs
	return m
}
