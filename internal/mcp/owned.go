package mcp

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// owned records the jobs this server started, by host, so that Shutdown
// stops them. A job is owned from the moment its launch begins, and take
// waits for the launches under way: a job_start still launching when the
// session ends (its call cut short, or the SDK gone before its handler
// returned) is stopped with the rest, never left running.
type owned struct {
	mu       sync.Mutex
	jobs     map[string][]string
	closed   bool
	launches sync.WaitGroup
}

// errShuttingDown refuses a launch once the server has begun to stop its
// jobs.
var errShuttingDown = errors.New("the server is shutting down: no job is started")

// launch records that the job id is about to be launched on host: it is
// owned from now on (unless keep). done ends the launch; with failed, it
// forgets the job (nothing was started). An error once take has begun.
func (o *owned) launch(host, id string, keep bool) (done func(failed bool), err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, errShuttingDown
	}
	if !keep {
		if o.jobs == nil {
			o.jobs = map[string][]string{}
		}
		o.jobs[host] = append(o.jobs[host], id)
	}
	o.launches.Add(1)
	var once sync.Once
	return func(failed bool) {
		once.Do(func() {
			if failed && !keep {
				o.mu.Lock()
				// A host left with no job is no host to stop jobs on
				// (it may not even be there: no such container).
				if o.jobs[host] = slices.DeleteFunc(o.jobs[host], func(j string) bool { return j == id }); len(o.jobs[host]) == 0 {
					delete(o.jobs, host)
				}
				o.mu.Unlock()
			}
			o.launches.Done()
		})
	}, nil
}

// take refuses launches from now on, waits (until ctx ends) for those
// under way, and returns the jobs recorded, forgetting them.
func (o *owned) take(ctx context.Context) map[string][]string {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	waited := make(chan struct{})
	go func() {
		o.launches.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-ctx.Done():
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	jobs := o.jobs
	o.jobs = nil
	return jobs
}
