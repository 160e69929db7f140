package cli

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

type rmOptions struct {
	refs  []string
	force bool
}

func (a *app) rmCommand() *cobra.Command {
	var o rmOptions
	long, _ := help("rm")
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove jobs and their files",
		Long:  long,
		Args:  needArgs(1, -1, "a job id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.refs = args
			return a.runRm(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.force, "force", "f", false, "stop running jobs first")
	return cmd
}

// runRm removes the jobs o names, each host's, and prints their ids.
func (a *app) runRm(ctx context.Context, o rmOptions) error {
	res := a.fleet(a.limit(rmGrace(o.force))).Remove(ctx, o.refs, bgjob.RemoveOptions{Force: o.force})
	for _, r := range res {
		for _, d := range r.Value {
			fmt.Fprintf(a.stdout, "%s%s\n", a.hostPrefix(r.Host), path.Base(d))
		}
	}
	return failures(a, res)
}

func (a *app) pruneCommand() *cobra.Command {
	// prune's options are the library's, which its flags set.
	o := bgjob.PruneOptions{Keep: bgjob.DefaultKeep, OlderThan: bgjob.DefaultMaxAge}
	var labels []string
	long, _ := help("prune")
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove old ended jobs",
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Keep < 0 || o.OlderThan < 0 {
				return usageError("--keep and --older-than must not be negative")
			}
			var err error
			if o.Labels, err = parseLabels(labels); err != nil {
				return err
			}
			if o.All {
				if cmd.Flags().Changed("keep") || cmd.Flags().Changed("older-than") {
					return usageError("--all removes every ended job: it takes no --keep or --older-than")
				}
				o.Keep, o.OlderThan = 0, 0
			} else if o.Keep == 0 && o.OlderThan == 0 {
				return usageError("--keep 0 and --older-than 0 set no limit, so select no job (--all removes every ended job)")
			}
			return a.runPrune(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Keep, "keep", o.Keep, "keep the newest N ended jobs (0: no count limit)")
	f.BoolVar(&o.All, "all", false, "remove every ended job (no --keep or --older-than)")
	f.DurationVar(&o.OlderThan, "older-than", o.OlderThan, "remove ended jobs that ended longer ago than this (0: no age limit)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be removed")
	f.StringArrayVar(&labels, "label", nil, "prune only among the jobs with this label (--keep counts those), "+labelHelp+"; all given must match")
	f.BoolVar(&a.json, "json", false, `print {"jobs": [removed jobs], "stopped": [jobs of gone owners], "kept": [{id, name, status, reason, live_processes}]}, with "error" and "kind" when it failed`)
	return cmd
}

// runPrune removes the old ended jobs of each host, after stopping those
// of gone owners, and prints what it removed, stopped and kept.
func (a *app) runPrune(ctx context.Context, o bgjob.PruneOptions) error {
	// Each host's kept and stopped jobs; with one host, under "".
	var mu sync.Mutex
	kept := map[string][]keptJSON{}
	stopped := map[string][]jobdir.Job{}
	host := func(j jobdir.Job) string { return a.hostName(j.Host) }
	o.Kept = func(j jobdir.Job) {
		mu.Lock()
		defer mu.Unlock()
		a.keptNote(host(j), j)
		kept[host(j)] = append(kept[host(j)], keptOf(j))
	}
	o.StopOrphans = true
	o.Stopped = func(j jobdir.Job) {
		mu.Lock()
		defer mu.Unlock()
		stopped[host(j)] = append(stopped[host(j)], j)
		if !a.json {
			fmt.Fprintf(a.stdout, "%sstopped %s\n", a.hostPrefix(j.Host), j.ID)
		}
	}
	if !a.json {
		// Printed as removed: the jobs are not held (megabytes at 10,000).
		o.Pruned = func(j jobdir.Job) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(a.stdout, "%s%s\n", a.hostPrefix(j.Host), j.ID)
		}
	}
	var reached atomic.Bool
	// prune stops the jobs of gone owners first.
	res := bgjob.Each(ctx, a.fleet(a.limit(bgjob.DefaultGrace)), func(ctx context.Context, _ string, c *bgjob.Client) ([]jobdir.Job, error) {
		reached.Store(true)
		return c.Prune(ctx, o)
	})
	switch {
	case !a.json:
		// Printed as each job was removed (Pruned).
	case a.many():
		if err := jobsJSONWith(a, res, func(h *hostJSON) {
			if h.Error == "" || h.Jobs != nil {
				k, s := nonNil(kept[h.Host]), nonNil(stopped[h.Host])
				h.Kept, h.Stopped = &k, &s
			}
		}); err != nil {
			return err
		}
	case reached.Load() && (res[0].Err == nil || len(res[0].Value)+len(stopped[""])+len(kept[""]) > 0):
		// A host that failed before doing anything (a container host
		// fails at its first script, not at Dial) prints the error's
		// document alone.
		// What prune did and why it failed are one document.
		err := failures(a, res)
		doc := pruneJSON{Jobs: nonNil(res[0].Value), Stopped: nonNil(stopped[""]), Kept: nonNil(kept[""]), errorJSON: errorJSONOf(err)}
		if perr := printJSON(a.stdout, doc); perr != nil {
			return perr
		}
		if err != nil {
			return &shownError{err: err}
		}
		return nil
	}
	return failures(a, res)
}

// nonNil is s, or an empty slice for nil: [] in --json, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// pruneJSON is prune's --json: the jobs removed (with --dry-run, those
// that would be), the running jobs stopped first because their owner is
// gone, and those the rule selects but prune kept; and, when a job could
// not be removed, the error and its kind.
type pruneJSON struct {
	Jobs    []jobdir.Job `json:"jobs"`
	Stopped []jobdir.Job `json:"stopped"`
	Kept    []keptJSON   `json:"kept"`
	errorJSON
}

// keptJSON is a job prune kept, and why: reason live_processes (it has
// ended, but processes of it still run; process_scan says how they were
// found where the host has no /proc).
type keptJSON struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	Status        jobdir.Status `json:"status"`
	Reason        string        `json:"reason"`
	LiveProcesses int           `json:"live_processes"`
	ProcessScan   string        `json:"process_scan,omitempty"`
}

func keptOf(j jobdir.Job) keptJSON {
	return keptJSON{ID: j.ID, Name: j.Name, Status: j.Status, Reason: "live_processes", LiveProcesses: j.LiveProcesses, ProcessScan: j.ProcessScan}
}

// keptNote says on stderr that prune kept j, and why (with --json too).
func (a *app) keptNote(host string, j jobdir.Job) {
	if host != "" {
		host += ": "
	}
	fmt.Fprintf(a.stderr, "bgjob: kept %s%s: %s\n", host, visible(j.ID), liveText(j))
}
