package shellgen_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bgjob/bgjob/shellgen"
)

// TestDirLockEdges: bg_dirlock under every shell, where the file system
// or another user gets in its way. A lock made whose owner cannot be
// written (a full disk: printf fails) is let go of, status 2, not left
// behind ownerless for every later taker to wait out. A holder judged
// gone whose owner file cannot be renamed away (a lock of another user)
// costs a nap a try and counts against the limit: no busy loop. An owner
// that is no regular file (a FIFO) blocks no reader: it names no holder,
// and the lock is made again after 20 naps.
func TestDirLockEdges(t *testing.T) {
	calls := "bg_dirlock \"$1\" x 0\n"
	lib := shellgen.LibClosure(calls) + "bg_root=/nonexistent\n"
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, "lock")
			run := func(script string, timeout time.Duration) (string, error) {
				t.Helper()
				cmd := sh.command(t, "-c", lib+script, "sh", lock)
				done := make(chan struct{})
				var out []byte
				var err error
				go func() { out, err = cmd.CombinedOutput(); close(done) }()
				select {
				case <-done:
				case <-time.After(timeout):
					cmd.Process.Kill()
					<-done
					t.Fatalf("%q did not end within %v", script, timeout)
				}
				return string(out), err
			}

			// The owner's write fails.
			out, err := run(`printf() { return 1; }; bg_dirlock "$1" "1 2" 5; echo "rc=$?"; [ -e "$1" ] && echo left; :`, 10*time.Second)
			if err != nil || out != "rc=2\n" {
				t.Errorf("a lock whose owner could not be written: %q %v, want rc=2 and no lock left", out, err)
			}

			// A holder gone, its owner not renamable: naps, counted.
			if err := os.Mkdir(lock, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lock, "owner"), []byte("999999999 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			out, err = run(`n=0; mv() { n=$((n + 1)); return 1; }; bg_dirlock "$1" "1 2" 5; echo "rc=$? mv=$n"`, 20*time.Second)
			if err != nil || out != "rc=1 mv=5\n" {
				t.Errorf("a gone holder's owner not renamable: %q %v, want rc=1 after 5 tries", out, err)
			}
			if took := time.Since(began); took < 400*time.Millisecond {
				t.Errorf("5 tries took %v: no naps between them", took)
			}

			// A FIFO as the owner: no reader blocks; made again.
			if err := os.Remove(filepath.Join(lock, "owner")); err != nil {
				t.Fatal(err)
			}
			if out, err := run(`mkfifo "$1/owner" && bg_dirlock "$1" "7 8" 0 && cat "$1/owner"`, 20*time.Second); err != nil || out != "7 8\n" {
				t.Errorf("a FIFO owner: %q %v, want the lock made again", out, err)
			}

		})
	}
}
