package shellgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bgjob/bgjob/shellgen"
)

// TestStoppedStatus checks bg_stopped, the status a wrapper records for a
// job a stop ended before its command ran (a queued job, a stop before
// the fork): 128 plus the number of the stop's signal, for every signal
// a stop sends, under every shell. dash's kill -l takes no name: every
// signal but TERM came out 143.
func TestStoppedStatus(t *testing.T) {
	lib := shellgen.LibFunc("bg_stopped") + shellgen.LibFunc("bg_signum") + shellgen.LibFunc("bg_rec") + shellgen.LibFunc("bg_line")
	names := []string{"TERM", "INT", "QUIT", "HUP", "KILL", "USR1", "USR2", "ALRM"}
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			for _, name := range names {
				if _, err := shellgen.ParseSignal(name); err != nil {
					t.Fatalf("%s is not a signal a stop sends: %v", name, err)
				}
				// As jobdir encodes it, and as a stop writes it over the
				// launcher's blank, padded to its length.
				for _, mark := range []string{"stop " + name + "\n", fmt.Sprintf("%-31s\n", "timeout "+name)} {
					reason, _, _ := strings.Cut(mark, " ")
					dir := t.TempDir()
					if err := os.WriteFile(filepath.Join(dir, "stop"), []byte(mark), 0o600); err != nil {
						t.Fatal(err)
					}
					out, err := sh.command(t, "-c", lib+`bg_d=$1; bg_stopped && echo "$bg_rc"`, "sh", dir).Output()
					if err != nil {
						t.Fatalf("%s %s: %v", reason, name, err)
					}
					want := 128 + int(unix.SignalNum("SIG"+name))
					if got := strings.TrimSpace(string(out)); got != strconv.Itoa(want) {
						t.Errorf("a job stopped (%s %s) before its command ran records %s, want %d", reason, name, got, want)
					}
				}
			}
		})
	}
}
