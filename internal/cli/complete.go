package cli

import (
	"context"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// How many of the newest jobs completion offers, and how many it reads to
// find the workspaces in use.
const (
	completionJobs       = 100
	completionWorkspaces = 500
)

// completions registers the completion of the verbs' job ids and names,
// of -w (the workspaces in use), -H (the hosts of the ssh configuration)
// and of run's -n (the names in use). A job reference never falls back
// to file names.
func (a *app) completions(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "status", "wait", "stop", "rm":
			cmd.ValidArgsFunction = a.completeJobs(-1)
		case "logs", "send":
			cmd.ValidArgsFunction = a.completeJobs(1)
		case "run":
			cmd.RegisterFlagCompletionFunc("name", a.completeNames)
		}
	}
	root.RegisterFlagCompletionFunc("workspace", a.completeWorkspaces)
	root.RegisterFlagCompletionFunc("host", a.completeHosts)
}

// completeJobs completes job ids and names, newest first, for the first
// max arguments (max < 0: all of them), leaving out those already given.
func (a *app) completeJobs(max int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if max >= 0 && len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		jobs := a.completionList(cmd, bgjob.ListOptions{Limit: completionJobs})
		var out []cobra.Completion
		given := map[string]bool{}
		for _, g := range args {
			given[g] = true
		}
		for _, j := range jobs {
			if j.Name != "" && !given[j.Name] && strings.HasPrefix(j.Name, toComplete) {
				given[j.Name] = true
				out = append(out, cobra.CompletionWithDesc(j.Name, describe(j, j.ID)))
			}
			if !given[j.ID] && strings.HasPrefix(j.ID, toComplete) {
				given[j.ID] = true
				out = append(out, cobra.CompletionWithDesc(j.ID, describe(j, j.Name)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeNames completes run's --name with the names in use, newest
// first (to replace one, or to keep clear of it).
func (a *app) completeNames(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, j := range a.completionList(cmd, bgjob.ListOptions{Limit: completionJobs}) {
		if j.Name != "" && !seen[j.Name] && strings.HasPrefix(j.Name, toComplete) {
			seen[j.Name] = true
			out = append(out, cobra.CompletionWithDesc(j.Name, describe(j, j.ID)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeWorkspaces completes -w with the workspaces of the newest jobs
// of the root, the most recently used first.
func (a *app) completeWorkspaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, j := range a.completionList(cmd, bgjob.ListOptions{Limit: completionWorkspaces, AllWorkspaces: true}) {
		if !slices.Contains(out, j.Workspace) && strings.HasPrefix(j.Workspace, toComplete) {
			out = append(out, j.Workspace)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeHosts completes -H with the Host names of the ssh configuration
// bgjob reads (--ssh-config, BGJOB_SSH_CONFIG or ~/.ssh/config), after a
// "user@" and the hosts of a comma list already typed. Nothing is offered
// for an @FILE.
func (a *app) completeHosts(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	if strings.HasPrefix(toComplete, "@") {
		return nil, none
	}
	a.stderr = io.Discard
	ctx, cancel := context.WithTimeout(cmd.Context(), completionBound)
	defer cancel()
	// The hosts of -H given before this one are resolved and compared;
	// none is dialled.
	if a.setup(ctx, cmd) != nil {
		return nil, none
	}
	list, word := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		list, word = toComplete[:i+1], toComplete[i+1:]
	}
	typed := strings.Split(list, ",")
	user := ""
	if i := strings.LastIndexByte(word, '@'); i >= 0 {
		user, word = word[:i+1], word[i+1:]
	}
	var out []cobra.Completion
	if full == nil {
		// The names of ssh_config are bgjob-full's to read: it
		// completes the whole line (nothing is printed yet).
		needFull("completion", a.args)
		return nil, none
	}
	for _, h := range full.ConfigHosts(a.sshConfig) {
		if strings.HasPrefix(h, word) && !slices.Contains(typed, h) {
			out = append(out, list+user+h)
		}
	}
	return out, none
}

// completionList returns the jobs List finds with o on the hosts of the
// command line (this machine without -H), newest first, from the hosts
// that answer within the completion's bound; nothing when the flags are
// unusable. It asks for no passphrase and prints no warning.
func (a *app) completionList(cmd *cobra.Command, o bgjob.ListOptions) []jobdir.Job {
	explicit := cmd.Flags().Changed("host-timeout")
	sctx, cancel := context.WithTimeout(cmd.Context(), localBound)
	defer cancel()
	a.stderr = io.Discard
	if a.setup(sctx, cmd) != nil || a.workspace == "" {
		return nil
	}
	hosts, bound := a.hosts, completionBound
	if len(hosts) == 0 {
		hosts, bound = []string{""}, localBound
	}
	if explicit && a.hostTimeout > 0 {
		bound = a.hostTimeout
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), bound)
	defer cancel()
	// No passphrase prompt while the shell completes.
	dial := func(ctx context.Context, h string) (*bgjob.Client, func(), error) {
		return a.client(ctx, h, false)
	}
	var jobs []jobdir.Job
	for _, r := range bgjob.NewFleet(hosts, dial, a.parallel).List(ctx, o) {
		jobs = append(jobs, r.Value.Jobs...)
	}
	if len(hosts) > 1 {
		// Ids start with the time the job started.
		slices.SortStableFunc(jobs, func(x, y jobdir.Job) int { return strings.Compare(y.ID, x.ID) })
	}
	return jobs
}

// describe is the description of a job in a list of completions: its
// other reference (the name of an id, the id of a name), its status and
// the start of its command, on one line.
func describe(j jobdir.Job, other string) string {
	d := string(j.Status) + ": "
	if other != "" {
		d = other + ", " + d
	}
	cmd := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, j.Command)
	cmd = strings.Join(strings.Fields(cmd), " ")
	if r := []rune(cmd); len(r) > 50 {
		cmd = string(r[:50]) + "..."
	}
	return d + cmd
}
