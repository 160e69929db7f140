package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version and commit, when set at link time (task release: -ldflags "-X
// github.com/bgjob/bgjob/internal/cli.version=v1.2.0 -X ...commit=4f2a9c1"),
// stand for what the build information lacks: with -buildvcs=false, or
// outside a git work tree, it holds no commit.
var version, commit string

// versionText says which bgjob this is, from the build information the Go
// toolchain embeds: the module version ("devel" for a build from a work
// tree), the commit and the Go version. For example:
//
//	bgjob v1.2.0 (commit 4f2a9c1e0b7d, 2026-11-30T10:15:02Z, go1.26.8)
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "bgjob (no build information)"
	}
	v := moduleVersion()
	var extra []string
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		rev = commit
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "+modified"
		}
		extra = append(extra, "commit "+rev)
	}
	if when != "" {
		extra = append(extra, when)
	}
	extra = append(extra, bi.GoVersion)
	return fmt.Sprintf("bgjob %s (%s)", v, strings.Join(extra, ", "))
}

// moduleVersion is bgjob's module version, "devel" for a build from a work
// tree.
func moduleVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "devel"
	}
	return bi.Main.Version
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bgjob's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return a.runVersion() },
	}
}

// runVersion prints which bgjob this is. version has no flags, so no
// options.
func (a *app) runVersion() error {
	_, err := fmt.Fprintln(a.stdout, versionText())
	return err
}
