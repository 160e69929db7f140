package shellgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/internal/shellgen"
	"github.com/bgjob/bgjob/internal/testneed"
)

// TestBootstrap runs a script longer than one argument through the
// bootstrap, as the runtimes do ("sh -c BOOTSTRAP sh N", the script and
// then its own stdin on one pipe), under every shell, with the host's
// tools, busybox's, and a dd that knows no iflag (POSIX's, BSD's). The
// script gets all of its stdin: busybox's head -c, which the bootstrap
// used, read 4 KiB ahead and ate its start. Multi-byte characters in a
// UTF-8 locale count as their bytes. A script cut short is not run.
func TestBootstrap(t *testing.T) {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		testneed.Missing(t, "busybox: %v", err)
	}
	applets := func(t *testing.T, names ...string) string {
		dir := t.TempDir()
		for _, n := range names {
			if err := os.Symlink(busybox, filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tools := []struct {
		name string
		dir  func(t *testing.T) string // put first in PATH; "" for none
	}{
		{"host tools", func(*testing.T) string { return "" }},
		{"busybox tools", func(t *testing.T) string { return applets(t, "head", "dd", "wc") }},
		{"dd without iflag", func(t *testing.T) string {
			dir := applets(t, "head", "wc")
			dd := "#!/bin/sh\ncase $* in *iflag=*) echo 'dd: unknown operand' >&2; exit 1 ;; esac\nexec " + busybox + " dd \"$@\"\n"
			if err := os.WriteFile(filepath.Join(dir, "dd"), []byte(dd), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
	}
	script := "echo ran; cat\n#" + strings.Repeat("é€x", 40<<10) + "\n"
	var stdin strings.Builder
	for i := range 20000 {
		stdin.WriteString(strconv.Itoa(i) + "\n")
	}
	for _, sh := range allShells {
		for _, tl := range tools {
			t.Run(sh.name+", "+tl.name, func(t *testing.T) {
				path := os.Getenv("PATH")
				if d := tl.dir(t); d != "" {
					path = d + string(os.PathListSeparator) + path
				}
				run := func(in string) (string, string, error) {
					cmd := sh.command(t, "-c", shellgen.Bootstrap(), "sh", strconv.Itoa(len(script)))
					cmd.Env = append(os.Environ(), "PATH="+path, "LANG=C.UTF-8", "LC_ALL=")
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
