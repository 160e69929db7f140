//go:build linux

// Command attachlat measures the typing latency of bgjob attach: it runs
// attach on a terminal of its own (a pty it holds), types keys into it one
// at a time, at random intervals, and times each key from its write to the
// terminal to its echo on attach's output. The job attached to must echo each byte at once, as
// a --pty job running
//
//	stty raw -echo; while :; do dd bs=1 count=1 2>/dev/null; done
//
// does. After the keys it leaves attach idle for -idle and reports the CPU
// (user + system, from /proc) that attach and its children used meanwhile,
// and with -host PID that of the processes under PID (a loopback sshd: the
// host side of an attach over SSH), as a share of one core. Then it types
// the detach key.
//
//	attachlat [-n 100] [-gap 100ms] [-idle 20s] [-host PID] -- bgjob [-H HOST] attach ID
//
// Linux only: it reads /proc and allocates the pty with Linux's ioctls.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clockTick is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100
// on every Linux the benchmark runs on.
const clockTick = 100

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "attachlat: error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 100, "keys to type")
	gap := flag.Duration("gap", 100*time.Millisecond, "mean time between one key's echo and the next key (drawn from gap/2 to 3*gap/2)")
	idle := flag.Duration("idle", 20*time.Second, "time attached and idle over which CPU is measured")
	host := flag.Int("host", 0, "pid whose descendants are the host side (a loopback sshd); 0: none")
	label := flag.String("label", "attach", "label of the report's lines")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("usage: attachlat [flags] -- COMMAND...")
	}
	ptm, pts, err := openPTY()
	if err != nil {
		return err
	}
	defer ptm.Close()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pts.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()

	out := newScreen(ptm)
	// Ready: a first key comes back (the replay is drawn, the input flows).
	ready := false
	for i := 0; i < 20 && !ready; i++ {
		if _, err := ptm.Write([]byte{'.'}); err != nil {
			return err
		}
		_, ready = out.await('.', time.Second)
	}
	if !ready {
		return fmt.Errorf("no echo of a key within 20 s; attach's output: %q", out.all())
	}
	time.Sleep(500 * time.Millisecond)

	var lat []time.Duration
	lost := 0
	keyCPU := cpuOf(cmd.Process.Pid, *host)
	keyStart := time.Now()
	for i := range *n {
		key := byte('a' + i%26)
		out.drain()
		t0 := time.Now()
		if _, err := ptm.Write([]byte{key}); err != nil {
			return err
		}
		at, ok := out.await(key, 2*time.Second)
		if !ok {
			lost++
			continue
		}
		lat = append(lat, at.Sub(t0))
		// A random gap: a fixed one would lock the keys to the phase of a
		// host that looks for output every so often.
		time.Sleep(*gap/2 + rand.N(*gap))
	}
	keyEnd := cpuOf(cmd.Process.Pid, *host)
	keyWall := time.Since(keyStart)

	time.Sleep(time.Second)
	idleCPU := cpuOf(cmd.Process.Pid, *host)
	idleStart := time.Now()
	time.Sleep(*idle)
	idleEnd := cpuOf(cmd.Process.Pid, *host)
	idleWall := time.Since(idleStart)

	ptm.Write([]byte{0x1c}) // Ctrl-\, the detach key
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		return errors.New("attach did not end on the detach key")
	}

	slices.Sort(lat)
	fmt.Printf("%s: %d keys, %d lost, latency median %s, p90 %s, max %s\n", *label, len(lat), lost,
		ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 100)))
	fmt.Printf("%s: CPU while typing (%.0f s): client %s, host %s of a core\n", *label, keyWall.Seconds(),
		share(keyEnd.client-keyCPU.client, keyWall), share(keyEnd.host-keyCPU.host, keyWall))
	fmt.Printf("%s: CPU attached and idle (%.0f s): client %s, host %s of a core\n", *label, idleWall.Seconds(),
		share(idleEnd.client-idleCPU.client, idleWall), share(idleEnd.host-idleCPU.host, idleWall))
	if lost > 0 {
		return fmt.Errorf("%d keys got no echo within 2 s", lost)
	}
	return nil
}

// openPTY allocates a pseudo-terminal of 80x24: its master and its
// terminal.
func openPTY() (ptm, pts *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	ptm = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptm.Close()
		return nil, nil, fmt.Errorf("unlocking the pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		ptm.Close()
		return nil, nil, fmt.Errorf("naming the pty: %w", err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		return nil, nil, err
	}
	unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	return ptm, pts, nil
}

// screen is what attach writes to its terminal, each read with the time
// it arrived.
type screen struct {
	c    chan chunk
	seen []byte
}

type chunk struct {
	b  []byte
	at time.Time
}

func newScreen(f *os.File) *screen {
	s := &screen{c: make(chan chunk, 1024)}
	go func() {
		defer close(s.c)
		for {
			buf := make([]byte, 4096)
			n, err := f.Read(buf)
			if n > 0 {
				s.c <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// await returns when key arrived, within d.
func (s *screen) await(key byte, d time.Duration) (time.Time, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case c, ok := <-s.c:
			if !ok {
				return time.Time{}, false
			}
			s.seen = append(s.seen, c.b...)
			if bytes.IndexByte(c.b, key) >= 0 {
				return c.at, true
			}
		case <-t.C:
			return time.Time{}, false
		}
	}
}

// drain takes what has arrived and not been looked at.
func (s *screen) drain() {
	for {
		select {
		case c, ok := <-s.c:
			if !ok {
				return
			}
			s.seen = append(s.seen, c.b...)
		default:
			return
		}
	}
}

func (s *screen) all() string {
	s.drain()
	return string(s.seen)
}

// cpu is CPU time in clock ticks: of the client (attach and what runs
// under it) and of the host side (what runs under the -host pid).
type cpu struct{ client, host int64 }

func cpuOf(client, host int) cpu {
	c := cpu{client: treeCPU(client)}
	if host > 0 {
		c.host = treeCPU(host)
	}
	return c
}

// treeCPU is the CPU time of pid and every live process under it, with
// what their ended children used (cutime, cstime): the whole tree's, as
// long as what ends in it is reaped in it.
func treeCPU(pid int) int64 {
	children := map[int][]int{}
	ticks := map[int]int64{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state ppid ...
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
		var t int64
		for _, s := range f[11:15] { // utime stime cutime cstime
			v, _ := strconv.ParseInt(s, 10, 64)
			t += v
		}
		ticks[p] = t
	}
	var sum int64
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		sum += ticks[p]
		todo = append(todo, children[p]...)
	}
	return sum
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*p + 99) / 100
	return d[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func share(ticks int64, over time.Duration) string {
	return fmt.Sprintf("%.1f%%", 100*float64(ticks)/clockTick/over.Seconds())
}
