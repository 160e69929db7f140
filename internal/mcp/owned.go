package mcp

import "sync"

// owned records the jobs this server started, by host, so that Shutdown
// stops them.
type owned struct {
	mu   sync.Mutex
	jobs map[string][]string
}

func (o *owned) add(host, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.jobs == nil {
		o.jobs = map[string][]string{}
	}
	o.jobs[host] = append(o.jobs[host], id)
}

// take returns the jobs recorded and forgets them.
func (o *owned) take() map[string][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	jobs := o.jobs
	o.jobs = nil
	return jobs
}
