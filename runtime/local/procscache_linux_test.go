package local

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local/proc"
	"github.com/bgjob/bgjob/shellgen"
)

// execHelper names the stage of the process TestExecHelper is: "0"
// execs into "1" (with address randomization off where
// BGJOB_TEST_NOASLR is 1), which says "ready", waits for a line and
// execs into "2", its padding swapped for BGJOB_JOB_ID of
// BGJOB_TEST_ID: an environment of the same size, from the same file,
// which, with randomization off, lands where the one before was.
const execHelper = "BGJOB_TEST_EXEC"

// padVar is as long as "BGJOB_JOB_ID=" and an id.
const padVar = "BGJOB_TEST_PAD=12345678901234567890"

// TestExecHelper is the process TestWarmLookCountsAnExec starts; run as
// a test, it does nothing.
func TestExecHelper(t *testing.T) {
	stage := os.Getenv(execHelper)
	if stage == "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		os.Exit(3)
	}
	env := os.Environ()
	switch stage {
	case "0":
		if os.Getenv("BGJOB_TEST_NOASLR") == "1" {
			// personality(2) with ADDR_NO_RANDOMIZE (0x0040000).
			if _, _, e := unix.RawSyscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0); e != 0 {
				os.Exit(4)
			}
		}
		env[slices.Index(env, execHelper+"=0")] = execHelper + "=1"
	case "1":
		fmt.Println("ready")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			os.Exit(0)
		}
		env[slices.Index(env, execHelper+"=1")] = execHelper + "=2"
		env[slices.Index(env, padVar)] = "BGJOB_JOB_ID=" + os.Getenv("BGJOB_TEST_ID")
	default:
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	syscall.Exec(self, os.Args, env)
	os.Exit(5)
}

// envBounds returns fields 50 and 51 of pid's stat line, the bounds of
// its environment block.
func envBounds(t *testing.T, pid int) (uint64, uint64) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, ok := parseProcStat(bytes.TrimSuffix(b, []byte("\n")), map[string]string{})
	if !ok {
		t.Fatalf("stat line %q not read", b)
	}
	return st.env.start, st.env.end
}

// TestWarmLookCountsAnExec: a process outside the job, started after it,
// whose environment a look found without a job id (the verdict
// remembered), and which then execs into one that carries the job's id,
// is counted by the next look, as the script counts it: with address
// randomization off too, where the exec lays the new environment out
// exactly where the old one was.
func TestWarmLookCountsAnExec(t *testing.T) {
	for _, noASLR := range []bool{false, true} {
		t.Run(fmt.Sprintf("randomization off %v", noASLR), func(t *testing.T) {
			root := t.TempDir()
			ctx := context.Background()
			c, err := newClient(t, root, "")
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 30"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Stop(ctx, []string{r.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
			time.Sleep(20 * time.Millisecond) // a clock tick: the helper starts after the job
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			h := exec.Command(self, "-test.run=^TestExecHelper$")
			h.Env = append(os.Environ(), execHelper+"=0", padVar, "BGJOB_TEST_ID="+r.ID, "BGJOB_TEST_NOASLR="+map[bool]string{true: "1"}[noASLR])
			h.Env = slices.DeleteFunc(h.Env, func(v string) bool { return strings.HasPrefix(v, "BGJOB_JOB_ID=") })
			h.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			in, err := h.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Process.Kill(); h.Wait() })
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("the helper said %q, %v", line, err)
			}
			shells := nativeShells(t)
			dirs, refs := []string{r.Dir}, []string{r.ID}
			// Three looks: cold, warm (the helper read), warm (its
			// verdict taken as it is).
			for range 3 {
				if got := compareLook(t, c, shells, dirs, refs, nil); !strings.Contains(got, "\nL\t1\tproc\n") {
					t.Fatalf("before the exec: %q, want L 1 (the job's sleep)", got)
				}
			}
			known, _ := c.procs.snapshot()
			if e := known[h.Process.Pid]; !e.clean {
				t.Fatalf("the helper's verdict is not remembered: %+v", e)
			}
			start, end := envBounds(t, h.Process.Pid)
			if _, err := io.WriteString(in, "exec\n"); err != nil {
				t.Fatal(err)
			}
			environ := "/proc/" + strconv.Itoa(h.Process.Pid) + "/environ"
			if !settled(func() bool {
				b, _ := os.ReadFile(environ)
				return bytes.Contains(b, []byte("BGJOB_JOB_ID="+r.ID))
			}) {
				t.Fatal("the helper did not exec")
			}
			nstart, nend := envBounds(t, h.Process.Pid)
			if same := nstart == start && nend == end; same != noASLR {
				t.Errorf("the environment block at [%d,%d], then [%d,%d]: the same place %v, want %v", start, end, nstart, nend, same, noASLR)
			}
			if got := compareLook(t, c, shells, dirs, refs, nil); !strings.Contains(got, "\nL\t2\tproc\n") {
				t.Errorf("after the exec: %q, want L 2 (the sleep and the helper)", got)
			}
		})
	}
}

// TestWarmLookCountsAForkingEscapee: an escapee that forks while looks
// scan (a shell loop that leaves the job's session and starts a short
// sleep again and again), and one that hops (each generation starts the
// next and exits: a scan lists one generation, finds it gone when it
// reads it, and never listed the next), are counted by every look, warm
// or cold: never fewer than the processes alive throughout it.
func TestWarmLookCountsAForkingEscapee(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		// min is the count every look must reach: the job's sleep and
		// the escapee. A look may count more: a child, or a generation
		// with the next, one of them gone before the look ends.
		min int
	}{
		{"forks", `setsid sh -c 'while :; do sleep 0.002; done' & exec sleep 300`, 2},
		// A generation lives 100 ms: a look lists /proc again, reading
		// what started since, maxCatchUps times, and one that hops
		// faster than those rounds (tens of ms each under the race
		// detector, with other processes coming and going) can outrun
		// it.
		{"hops", `setsid sh -c 'sleep 0.1; sh -c "$0" "$0" & exit' 'sleep 0.1; sh -c "$0" "$0" & exit' & exec sleep 300`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			ctx := context.Background()
			c, err := newClient(t, root, "")
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Run(ctx, bgjob.Spec{Argv: []string{tc.cmd}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Stop(ctx, []string{r.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
			time.Sleep(100 * time.Millisecond)
			for _, warm := range []bool{false, true} {
				counts := map[int]int{}
				for range 50 {
					a := answererOf(c)
					if !warm {
						a.procs = nil
					}
					got, ok := a.status(shellgen.Status{Refs: []string{r.ID}})
					if !ok {
						t.Fatal("left to the script")
					}
					_, l, _ := strings.Cut(got, "\nL\t")
					l, _, _ = strings.Cut(l, "\t")
					n, err := strconv.Atoi(l)
					if err != nil {
						t.Fatalf("%q: no count", got)
					}
					counts[n]++
				}
				for n := range counts {
					if n < tc.min {
						t.Errorf("warm %v: counts %v (count: looks), want each %d at least", warm, counts, tc.min)
						break
					}
				}
				t.Logf("warm %v: counts (count: looks): %v", warm, counts)
			}
		})
	}
}

// BenchmarkLook is a status of a running job made in Go, cold (as a
// one-shot call makes it) and warm (as a Runtime that looked before makes
// it), with the processes the host has, and BGJOB_BENCH_AFTER idle
// processes more started after the job (bench/scan.sh runs it with 2,000
// idle processes started before, then after).
func BenchmarkLook(b *testing.B) {
	root := b.TempDir()
	ctx := context.Background()
	c, err := newClientOf(New(), root, "")
	if err != nil {
		b.Fatal(err)
	}
	r, err := c.Run(ctx, bgjob.Spec{Argv: []string{"setsid sleep 300 & exec sleep 300"}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop(ctx, []string{r.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))})
	after, _ := strconv.Atoi(os.Getenv("BGJOB_BENCH_AFTER"))
	if after > 0 {
		time.Sleep(20 * time.Millisecond)
		idle := exec.Command("sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep 300 & i=$((i+1)); done; wait", after))
		idle.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := idle.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { syscall.Kill(-idle.Process.Pid, syscall.SIGKILL); idle.Wait() }()
		// Started one by one: on a busy host, longer than settled waits.
		for end := time.Now().Add(2 * time.Minute); groupSize(idle.Process.Pid) <= after; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(end) {
				b.Fatal("the idle processes did not start")
			}
		}
	}
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) {
			a := answererOf(c)
			if !warm {
				a.procs = nil
			}
			for b.Loop() {
				if _, ok := a.status(shellgen.Status{Refs: []string{r.ID}}); !ok {
					b.Fatal("left to the script")
				}
			}
		})
	}
}

// TestParseProcStat: parseProcStat reads the fields proc.ParseStat reads
// as the scan took them (pid, state, group, start time), refuses the
// same lines, and reads the environment's key where the line has it.
func TestParseProcStat(t *testing.T) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	for _, tt := range []struct {
		name, line string
		ok         bool
	}{
		{"this process", strings.TrimSuffix(string(self), "\n"), true},
		{"a name with ) and blanks", "12 (a) b ) c) S 1 12 12 0 -1 0 5 0 7 0 0 0 0 0 20 0 1 0 4242 0 0" + tail, true},
		{"a zombie", "13 (z) Z 1 13 13 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", true},
		{"no environment's fields", "14 (old) S 1 14 14 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7", true},
		{"too few fields", "15 (x) S 1 15 15", false},
		{"a start that is no number", "16 (x) S 1 16 16 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1e3 0", false},
		{"a pid with a leading 0", "017 (x) S 1 17 17 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7 0", false},
		{"no parenthesis", "18 x S 1 18 18 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7 0", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := parseProcStat([]byte(tt.line), map[string]string{})
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want, _ := proc.ParseStat([]byte(tt.line))
			if got := (proc.Stat{PID: strconv.Itoa(st.pid), State: map[bool]string{true: want.State}[st.zombie == want.Zombie()], PGID: st.pgid, Start: strconv.FormatInt(st.start, 10)}); got != want {
				t.Errorf("parseProcStat: %+v, proc.ParseStat: %+v", got, want)
			}
			if f := strings.Fields(tt.line[strings.LastIndexByte(tt.line, ')')+1:]); len(f) > 48 {
				if fmt.Sprint(st.env.start) != f[47] || fmt.Sprint(st.env.end) != f[48] {
					t.Errorf("environment at [%d,%d], want fields 50 and 51, [%s,%s]", st.env.start, st.env.end, f[47], f[48])
				}
			} else if st.env.valid() {
				t.Errorf("a key %+v from a line without the environment's fields", st.env)
			}
		})
	}
}
