package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/internal/testneed"
)

// noProcHost writes a command that reaches a host without /proc, for
// --via: "noproc-host HOST -- COMMAND..." runs COMMAND on this machine in
// a mount namespace of its own where /proc is unmounted (the directory is
// there, empty, as in a chroot that never mounted it), with PATH one
// directory, as bare as macOS's: busybox's tools (a static busybox: no
// GNU extensions, no flock), /bin/sh as sh, bash (macOS has it, and the
// jobs' commands run under it where a host has it: under sh, the counts
// of a command's processes differ by the shell's forks), and a ps that
// answers without /proc, as a BSD's or macOS's does: it runs the host's
// procps ps in a mount namespace of its own where a new /proc is mounted.
// The scripts' own reads of /proc find nothing; only ps sees the
// processes. busybox's sh (which runs its own applets, its ps among them,
// before PATH's) is left out. It returns the command's path. It skips the
// test unless it runs as root with unshare, mount, umount, ps, bash and a
// static busybox.
func noProcHost(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		testneed.Missing(t, "root, to unmount /proc in a mount namespace")
	}
	tools := map[string]string{}
	for _, tool := range []string{"unshare", "mount", "umount", "ps", "bash"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			testneed.Missing(t, "%s", tool)
		}
		tools[tool] = p
	}
	busybox, err := containertest.StaticBusybox()
	if err != nil {
		testneed.Missing(t, "%v", err)
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		t.Fatalf("%s --list: %v", busybox, err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// Left out: busybox's shells (sh is the host's /bin/sh), ps
	// (replaced below), and busybox itself.
	skip := map[string]bool{"sh": true, "ash": true, "ps": true, "busybox": true}
	for name, target := range map[string]string{"sh": "/bin/sh", "bash": tools["bash"]} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, applet := range strings.Fields(string(out)) {
		if skip[applet] {
			continue
		}
		if err := os.Symlink(busybox, filepath.Join(bin, applet)); err != nil {
			t.Fatal(err)
		}
	}
	ps := "#!/bin/sh\n# ps as a host without /proc has it: it answers from a /proc of its own.\n" +
		"exec " + tools["unshare"] + " -m /bin/sh -c '" + tools["mount"] + " -t proc proc /proc && exec " + tools["ps"] + " \"$@\"' ps \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ps"), []byte(ps), 0o755); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(dir, "noproc-host")
	script := "#!/bin/sh\n# noproc-host HOST -- COMMAND...: runs COMMAND here, with /proc unmounted.\nshift\n[ \"$1\" = -- ] && shift\n" +
		"exec " + tools["unshare"] + " -m /bin/sh -c '" + tools["umount"] + " -l /proc && [ ! -e /proc/self ] || " +
		"{ echo \"noproc-host: /proc is still there\" >&2; exit 99; }; PATH=" + bin + " exec \"$@\"' sh \"$@\"\n"
	if err := os.WriteFile(host, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return host
}

// TestNoProcVia runs the scripts of the truth table (exit statuses,
// signals, stop, leftovers and escapees, unreadable jobs, follow), and the
// queue as TestQueueSlots runs it, through --via on a host without /proc
// (noProcHost), where ps is all the scripts have to see processes.
// [noproc] marks what such a host cannot know: a process that left the
// job's group (an escapee) is not found. (The scripts' other reads of
// /proc all have a fallback; docs/design.md, "Hosts without /proc".)
func TestNoProcVia(t *testing.T) {
	t.Parallel()
	host := noProcHost(t)
	p := params(t, func(e *testscript.Env) {
		e.Setenv("BGJOB_HOST", "bgjob-test")
		e.Setenv("HOSTLABEL", "bgjob-test: ")
		e.Setenv("HOSTFLAG", "-H bgjob-test ")
		e.Setenv("BGJOB_VIA", host+" %h --")
	})
	p.Condition = conditions("via", "noproc")
	p.Dir = ""
	for _, name := range []string{"exit_status", "signals", "stop", "leftovers", "follow_reader", "unreadable_procs"} {
		p.Files = append(p.Files, filepath.Join("testdata", name+".txtar"))
	}
	testscript.Run(t, p)
	t.Run("queue", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		t.Cleanup(func() { killAll(root) })
		testQueueSlots(t, []string{"--root", root, "--via", host + " %h --", "-H", "bgjob-test"})
	})
}
