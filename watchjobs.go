package bgjob

import (
	"context"
	"fmt"
	"os"
	"path"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
)

// WatchJobs reports, on a runtime that is a Watcher (the local machine),
// each change to the jobs List would return: a job made or removed in the
// workspace's directory (with all, in any workspace's, and a workspace
// made), until ctx ends. A report is a trigger, never a read: the caller
// lists again. Reports that come while the caller is busy are merged into
// one, never lost. On a runtime that is not a Watcher it returns a nil
// channel, which never reports: the caller polls. It fails when the
// workspace's directory (with all, the root) does not exist yet.
func (c *Client) WatchJobs(ctx context.Context, all bool) (<-chan struct{}, error) {
	w, ok := c.rt.(Watcher)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	changed := make(chan struct{}, 1)
	report := func() {
		select {
		case changed <- struct{}{}:
		default: // one is already waiting
		}
	}
	watch := c.watchWorkspace
	if all {
		watch = c.watchWorkspaces
	}
	if err := watch(ctx, cancel, w, report); err != nil {
		cancel()
		return nil, err
	}
	return changed, nil
}

// watchWorkspace watches the workspace's directory with w, and calls
// report on each change, and when a launch under way there makes its
// meta.json (watchLaunch), until ctx ends; then it calls cancel.
func (c *Client) watchWorkspace(ctx context.Context, cancel context.CancelFunc, w Watcher, report func()) error {
	dirs := []string{path.Join(c.root, c.workspace)}
	events, err := w.Watch(ctx, dirs)
	if err != nil {
		return err
	}
	go func() {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case name := <-events:
				watchLaunch(ctx, w, dirs, name, report)
				report()
			}
		}
	}()
	return nil
}

// watchWorkspaces is watchWorkspace for every workspace: it watches the
// root, for a workspace made, and each workspace's directory, watched
// again (and reported once more, for what changed before the new watch
// was in place) when the root changes.
func (c *Client) watchWorkspaces(ctx context.Context, cancel context.CancelFunc, w Watcher, report func()) error {
	roots, err := w.Watch(ctx, []string{c.root})
	if err != nil {
		return err
	}
	spaces, scancel := c.watchSpaces(ctx, w)
	go func() {
		defer func() { scancel(); cancel() }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-roots:
				scancel()
				spaces, scancel = c.watchSpaces(ctx, w)
				report()
			case name := <-spaces:
				watchLaunch(ctx, w, c.rootDirs(), name, report)
				report()
			}
		}
	}()
	return nil
}

// watchSpaces watches, with w, the directories of the workspaces under
// the root now, until ctx ends or the returned cancel is called. Its
// channel is nil, which never sends, when the root cannot be read or a
// workspace was removed meanwhile: the root's change that removed it
// comes, and watches again.
func (c *Client) watchSpaces(ctx context.Context, w Watcher) (<-chan string, context.CancelFunc) {
	sctx, scancel := context.WithCancel(ctx)
	ents, err := os.ReadDir(c.root)
	if err != nil {
		return nil, scancel
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() && jobdir.ValidateName("workspace", e.Name()) == nil {
			dirs = append(dirs, path.Join(c.root, e.Name()))
		}
	}
	events, err := w.Watch(sctx, dirs)
	if err != nil {
		return nil, scancel
	}
	return events, scancel
}

// rootDirs lists the directories under the root, each where watchLaunch
// looks for a launch under way (none when the root cannot be read).
func (c *Client) rootDirs() []string {
	ents, err := os.ReadDir(c.root)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, path.Join(c.root, e.Name()))
		}
	}
	return dirs
}

// watchLaunch reports, when the entry name of one of the workspace
// directories dirs is a job directory without meta.json yet (a launch
// under way, which List passes over), the moment its meta.json appears:
// a caller that lists on each report would otherwise not see the job
// until something else changed in the workspace's directory. The watch
// ends there, with ctx, or after launchWatch.
func watchLaunch(ctx context.Context, w Watcher, dirs []string, name string, report func()) {
	if !jobdir.IsID(name) {
		return
	}
	for _, ws := range dirs {
		dir := path.Join(ws, name)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		meta := path.Join(dir, jobdir.MetaFile)
		if _, err := os.Stat(meta); err == nil {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(ctx, launchWatch)
			defer cancel()
			events, err := w.Watch(ctx, []string{dir})
			if err != nil {
				return
			}
			for {
				// One written before the watch was in place is looked for
				// once the watch is.
				if _, err := os.Stat(meta); err == nil {
					report()
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-events:
				}
			}
		}()
		return
	}
}

// WatchFiles sends, on a runtime that is a Watcher, the base name of each
// file of jobs that changes (exit_code, stdout.log, ...), until ctx ends;
// a caller watches the jobs that may still change and reads them again
// (Status) on a name that matters to it. Names are dropped while the
// receiver is busy. On a runtime that is not a Watcher it returns a nil
// channel, which never sends.
func (c *Client) WatchFiles(ctx context.Context, jobs []jobdir.Job) (<-chan string, error) {
	w, ok := c.rt.(Watcher)
	if !ok || len(jobs) == 0 {
		return nil, nil
	}
	dirs := make([]string, len(jobs))
	for i, j := range jobs {
		dirs[i] = j.Dir
	}
	events, err := w.Watch(ctx, dirs)
	if err != nil {
		return nil, fmt.Errorf("watching the files of %d jobs: %w", len(jobs), err)
	}
	return events, nil
}

// MayHaveEnded reports whether any of jobs, read as running, may have
// ended since without a file event to say so: a wrapper killed with
// SIGKILL writes no exit_code. On a runtime that is a Watcher (the local
// machine) it looks up each wrapper's pid in /proc and finds it alive with
// the start time and boot its meta.json records, as the scripts do, for
// a few microseconds and no script; it reports true for a job it cannot
// tell of (not running, no pid or start time recorded, another boot, no
// /proc) and on any other runtime. Like a file event it is a trigger,
// never a status: the caller reads the jobs again (Status).
func (c *Client) MayHaveEnded(jobs []jobdir.Job) bool {
	if _, ok := c.rt.(Watcher); !ok {
		return len(jobs) > 0
	}
	var boot string
	if len(jobs) > 0 {
		boot = proc.Boot()
	}
	for _, j := range jobs {
		if j.Status != jobdir.StatusRunning || j.PID <= 0 || j.ProcStart == "" || boot == "" || j.BootID != boot {
			return true
		}
		if start, zombie, found := proc.Start(j.PID); !found || zombie || start != j.ProcStart {
			return true
		}
	}
	return false
}
