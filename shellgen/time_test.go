package shellgen_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// TestStampClock checks bg_stamp, the host's clock as ended_at and
// host_started_at hold it, under every shell: from EPOCHREALTIME through
// bg_civil where the shell has it (bash, busybox), else from date(1), a
// plain EPOCHREALTIME from the environment put back; and bg_civil against
// Go's calendar over two centuries.
func TestStampClock(t *testing.T) {
	lib := shellgen.LibFunc("bg_stamp") + shellgen.LibFunc("bg_stampof") + shellgen.LibFunc("bg_civil") + shellgen.LibFunc("bg_mtime")
	var secs []int64
	for s := int64(-1); s < 7258118400; s += 86400*37 + 3607*5 + 13 {
		secs = append(secs, s+1)
	}
	secs = append(secs, 951782400, 951868799, 4107542399, 253402300799)
	var want, loop strings.Builder
	for _, s := range secs {
		want.WriteString(time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05") + "\n")
		loop.WriteString(strconv.FormatInt(s, 10) + " ")
	}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			script := lib + "for s in " + loop.String() + "; do bg_civil \"$s\"; printf '%s\\n' \"$bg_ts\"; done\n"
			out, err := sh.command(t, "-c", script).Output()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != want.String() {
				t.Errorf("bg_civil differs from Go's calendar:\n%s", firstDiff(string(out), want.String()))
			}

			before := time.Now().UTC().Truncate(time.Millisecond)
			cmd := sh.command(t, "-c", lib+"bg_stamp && printf '%s|%s\\n' \"$bg_ts\" \"${EPOCHREALTIME-unset}\"")
			cmd.Env = append(os.Environ(), "EPOCHREALTIME=12.5")
			out, err = cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			after := time.Now().UTC()
			stamp, env, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
			got, err := time.Parse("2006-01-02T15:04:05.000Z", stamp)
			if err != nil {
				t.Fatalf("bg_stamp printed %q, want milliseconds: %v", stamp, err)
			}
			if got.Before(before) || got.After(after) {
				t.Errorf("bg_stamp = %s, want between %s and %s", got, before, after)
			}
			if sh.name == "dash" && env != "12.5" {
				t.Errorf("dash: EPOCHREALTIME from the environment is %q after bg_stamp, want 12.5", env)
			}

			// bg_mtime: a file's time as Go's runtime/local writes it.
			f := filepath.Join(t.TempDir(), "exit_code")
			mt := time.Date(2026, 12, 7, 17, 4, 5, 678912345, time.UTC)
			if err := os.WriteFile(f, []byte("0\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(f, mt, mt); err != nil {
				t.Fatal(err)
			}
			out, err = sh.command(t, "-c", lib+`bg_mtime "$1" && printf '%s\n' "$bg_ts"`, "sh", f).Output()
			if got, want := strings.TrimSpace(string(out)), mt.Format(jobdir.EndedAtLayout); err != nil || got != want {
				t.Errorf("bg_mtime = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// firstDiff returns the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range w {
		if i >= len(g) || g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ": got " + strconv.Quote(strings.Join(g[i:min(i+1, len(g))], "")) + ", want " + strconv.Quote(w[i])
		}
	}
	return "got more lines than wanted"
}
