package shellgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/testneed"
	"github.com/bgjob/bgjob/shellgen"
)

// bootstrapTools are the tools a bootstrap may find: the host's,
// busybox's, and a dd that knows no iflag (POSIX's, BSD's); dir returns
// the directory to put first in PATH ("" for none).
var bootstrapTools = []struct {
	name string
	dir  func(tb testing.TB) string
}{
	{"host tools", func(testing.TB) string { return "" }},
	{"busybox tools", func(tb testing.TB) string { return applets(tb, "head", "dd", "wc") }},
	{"dd without iflag", func(tb testing.TB) string {
		dir := applets(tb, "head", "wc")
		dd := "#!/bin/sh\ncase $* in *iflag=*) echo 'dd: unknown operand' >&2; exit 1 ;; esac\nexec " + busybox(tb) + " dd \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, "dd"), []byte(dd), 0o755); err != nil {
			tb.Fatal(err)
		}
		return dir
	}},
}

func busybox(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("busybox")
	if err != nil {
		testneed.Missing(tb, "busybox: %v", err)
	}
	return p
}

// applets returns a directory of links to busybox named for the applets
// names (busybox runs the applet it is called by).
func applets(tb testing.TB, names ...string) string {
	tb.Helper()
	bb, dir := busybox(tb), tb.TempDir()
	for _, n := range names {
		if err := os.Symlink(bb, filepath.Join(dir, n)); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// bootstrap returns the command that runs script through the bootstrap
// under sh, the tools in dir first in PATH, in a UTF-8 locale.
func bootstrap(tb testing.TB, sh shell, dir, script string) *exec.Cmd {
	tb.Helper()
	cmd := sh.command(tb, "-c", shellgen.Bootstrap(), "sh", strconv.Itoa(len(script)))
	path := os.Getenv("PATH")
	if dir != "" {
		path = dir + string(os.PathListSeparator) + path
	}
	cmd.Env = append(os.Environ(), "PATH="+path, "LANG=C.UTF-8", "LC_ALL=")
	return cmd
}

// TestBootstrap runs a script longer than one argument through the
// bootstrap, as the runtimes do ("sh -c BOOTSTRAP sh N", the script and
// then its own stdin on one pipe), under every shell with each of
// bootstrapTools. The script gets all of its stdin: busybox's head -c,
// which the bootstrap used, read 4 KiB ahead and ate its start.
// Multi-byte characters in a UTF-8 locale count as their bytes. A script
// cut short is not run.
func TestBootstrap(t *testing.T) {
	script := "echo ran; cat\n#" + strings.Repeat("é€x", 40<<10) + "\n"
	var stdin strings.Builder
	for i := range 20000 {
		stdin.WriteString(strconv.Itoa(i) + "\n")
	}
	for _, sh := range allShells {
		for _, tl := range bootstrapTools {
			t.Run(sh.name+", "+tl.name, func(t *testing.T) {
				dir := tl.dir(t)
				run := func(in string) (string, string, error) {
					cmd := bootstrap(t, sh, dir, script)
					cmd.Stdin = strings.NewReader(in)
					var out, errb bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &errb
					err := cmd.Run()
					return out.String(), errb.String(), err
				}
				out, errs, err := run(script + stdin.String())
				if err != nil {
					t.Fatalf("%v: %s", err, errs)
				}
				if want := "ran\n" + stdin.String(); out != want {
					got, _, _ := strings.Cut(strings.TrimPrefix(out, "ran\n"), "\n")
					t.Fatalf("the script read %d bytes of its %d-byte stdin, starting %q; want all of it, starting \"0\"", len(out)-len("ran\n"), stdin.Len(), got)
				}
				out, errs, err = run(script[:len(script)-1000])
				if err == nil || out != "" || !strings.Contains(errs, "did not arrive whole") {
					t.Fatalf("a script cut short: %v, stdout %q, stderr %q; want an error and nothing run", err, out, errs)
				}
			})
		}
	}
}

// BenchmarkBootstrap measures running a 1 MiB script through the
// bootstrap (the script reads its short stdin and ends), under every
// shell with each of bootstrapTools.
func BenchmarkBootstrap(b *testing.B) {
	script := strings.Repeat("# "+strings.Repeat("é", 100)+"\n", 1<<20/204) + "cat >/dev/null\n"
	in := script + strings.Repeat("stdin\n", 100)
	for _, sh := range allShells {
		for _, tl := range bootstrapTools {
			b.Run(sh.name+", "+tl.name, func(b *testing.B) {
				dir := tl.dir(b)
				for b.Loop() {
					cmd := bootstrap(b, sh, dir, script)
					cmd.Stdin = strings.NewReader(in)
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v: %s", err, out)
					}
				}
			})
		}
	}
}
