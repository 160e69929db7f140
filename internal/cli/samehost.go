package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/bgjob/bgjob"
)

// distinctHosts returns hosts with each host that the ssh configuration
// sends to the same place as an earlier one (user, hostname, port,
// ProxyJump and ProxyCommand all equal) left out, and says so on stderr:
// two names for one account share its root, and the second run of a job
// would find the first one's directory. A host whose name does not resolve
// is kept: its verb reports why. Only bgjob-full asks (setHosts).
func (a *app) distinctHosts(ctx context.Context, hosts []string) []string {
	ends := make([]fmt.Stringer, len(hosts))
	opts := a.hostOptions(false)
	// Dial warns about the config again, for the hosts it connects to.
	opts.Warn = nil
	sem := make(chan struct{}, a.parallel)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, end := bgjob.Within(ctx, h, a.hostTimeout)
			// Not an SSH host (a container): kept as named.
			e, ok, err := full.Endpoint(ctx, h, opts)
			if end(err) == nil && ok {
				ends[i] = e
			}
		}()
	}
	wg.Wait()
	first := map[fmt.Stringer]string{}
	var out []string
	for i, h := range hosts {
		if e := ends[i]; e != nil {
			if f, ok := first[e]; ok {
				fmt.Fprintf(a.stderr, "bgjob: warning: %s is the same host as %s (%s): using it once\n", h, f, e)
				continue
			}
			first[e] = h
		}
		out = append(out, h)
	}
	return out
}
