//go:build linux

// Command endlat measures how soon a job's end is seen: the time from its
// command's last act (the command writes bash's EPOCHREALTIME to a file,
// then exits) to the moment its exit_code is whole, as a watcher of the
// job's directory (inotify) sees it. It runs n jobs one after the other
// with `BGJOB run -q` and prints the median and quartiles
// (docs/benchmarks.md).
//
//	endlat -bgjob ./bgjob -n 40
//
// The job root is a directory of its own under $TMPDIR.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	bin := flag.String("bgjob", "bgjob", "the bgjob binary")
	n := flag.Int("n", 40, "jobs")
	flag.Parse()
	root, err := os.MkdirTemp("", "endlat")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(root)
	var lat []time.Duration
	for i := range *n {
		d, err := one(*bin, root, i)
		if err != nil {
			fail(err)
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Microseconds()) / 1000 }
	fmt.Printf("%d jobs: the end seen %.2f ms (median) after the command's last act; p25–p75 %.2f–%.2f ms, min %.2f, max %.2f\n",
		len(lat), q(0.5), q(0.25), q(0.75), q(0), q(1))
}

// one runs job i and returns how long after its command's last act its
// exit_code was seen whole.
func one(bin, root string, i int) (time.Duration, error) {
	mark := filepath.Join(root, "t"+strconv.Itoa(i))
	out, err := exec.Command(bin, "--root", root, "run", "-q", "--", "bash", "-c",
		`sleep 0.2; printf '%s\n' "$EPOCHREALTIME" >`+mark).Output()
	if err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	dir := filepath.Join(root, "default", strings.TrimSpace(string(out)))
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "exit_code")); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			seen := time.Now()
			t, err := os.ReadFile(mark)
			if err != nil {
				return 0, fmt.Errorf("job %d ended before it marked its end: %w", i, err)
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(string(t)), 64)
			if err != nil {
				return 0, err
			}
			return seen.Sub(time.Unix(0, int64(f*1e9))), nil
		}
		if _, err := unix.Read(fd, buf); err != nil {
			return 0, err
		}
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "endlat: error: %v\n", err)
	os.Exit(1)
}
