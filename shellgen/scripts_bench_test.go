package shellgen_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bgjob/bgjob/bench/fixture"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

var benchTarget = shellgen.Target{Root: "/tmp/bgjob-0", Workspace: jobdir.DefaultWorkspace}

func benchMeta(i int) jobdir.Meta {
	t := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return jobdir.Meta{
		Version:   jobdir.Version,
		ID:        jobdir.NewID(t),
		Name:      fmt.Sprintf("job-%d", i),
		Workspace: jobdir.DefaultWorkspace,
		Command:   "make -j4 test",
		Cwd:       "/src/project",
		Env:       []string{},
		StartedAt: t,
		PID:       4000 + i,
		PGID:      4000 + i,
		ProcStart: "123456",
		BootID:    "5f1c2c3e-0d7a-4a8e-9d55-7b8b3f2e1a90",
	}
}

// BenchmarkScripts measures generating each script; every verb does this
// once before its one round trip.
func BenchmarkScripts(b *testing.B) {
	m := benchMeta(0)
	m.PID, m.PGID, m.ProcStart, m.BootID = 0, 0, "", ""
	gens := []struct {
		name string
		gen  func() (string, error)
	}{
		{"launch", func() (string, error) {
			return shellgen.LaunchScript(shellgen.Launch{Target: benchTarget, Meta: m, Grace: 2 * time.Second})
		}},
		{"launch-timeout-env", func() (string, error) {
			return shellgen.LaunchScript(shellgen.Launch{Target: benchTarget, Meta: m, Env: []string{"A=1", "B=two words"}, Timeout: time.Minute, Grace: 2 * time.Second})
		}},
		{"launch-prune", func() (string, error) {
			return shellgen.LaunchScript(shellgen.Launch{Target: benchTarget, Meta: m, Grace: 2 * time.Second, Prune: &shellgen.Prune{Keep: 1000, OlderThan: 7 * 24 * time.Hour}})
		}},
		{"launch-timeout-cap", func() (string, error) {
			return shellgen.LaunchScript(shellgen.Launch{Target: benchTarget, Meta: capped(m), Timeout: time.Minute, Grace: 2 * time.Second})
		}},
		{"job.sh", func() (string, error) {
			return shellgen.WrapperScript(shellgen.Launch{Target: benchTarget, Meta: m, Grace: 2 * time.Second})
		}},
		{"job.sh-timeout-cap", func() (string, error) {
			return shellgen.WrapperScript(shellgen.Launch{Target: benchTarget, Meta: capped(m), Timeout: time.Minute, Grace: 2 * time.Second})
		}},
		{"status", func() (string, error) { return shellgen.StatusScript(benchTarget, []string{m.ID}) }},
		{"list", func() (string, error) { return shellgen.ListScript(benchTarget, shellgen.List{Max: 21}) }},
		{"logs-tail", func() (string, error) {
			return shellgen.LogsScript(benchTarget, shellgen.Logs{Ref: m.ID, Tail: 100})
		}},
		{"wait", func() (string, error) { return shellgen.WaitScript(benchTarget, shellgen.Wait{Refs: []string{m.ID}}) }},
		{"stop", func() (string, error) {
			return shellgen.StopScript(benchTarget, shellgen.Stop{Refs: []string{m.ID}, Signal: "TERM", Grace: 2 * time.Second})
		}},
		{"remove", func() (string, error) {
			return shellgen.RemoveScript(benchTarget, shellgen.Remove{Refs: []string{m.ID}})
		}},
		{"prune", func() (string, error) {
			return shellgen.PruneScript(benchTarget, shellgen.Prune{Keep: 1000, OlderThan: 7 * 24 * time.Hour})
		}},
		{"send", func() (string, error) { return shellgen.SendScript(benchTarget, shellgen.Send{Ref: m.ID}) }},
	}
	for _, g := range gens {
		b.Run(g.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				s, err := g.gen()
				if err != nil {
					b.Fatal(err)
				}
				n = len(s)
			}
			b.ReportMetric(float64(n), "script-bytes")
		})
	}
}

// benchReport returns what a list script prints for n ended jobs.
func benchReport(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteString("banner from a login shell\n\n" + shellgen.BeginMarker + "\nB\t5f1c2c3e-0d7a-4a8e-9d55-7b8b3f2e1a90\n")
	for i := n - 1; i >= 0; i-- {
		m := benchMeta(i)
		line, err := jobdir.EncodeMeta(m)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&buf, "J\t/tmp/bgjob-0/default/%s\nM\t%sP\t\nX\t%d\nT\t2026-11-30T01:00:00Z\n", m.ID, line, i%3)
	}
	buf.WriteString("\n" + shellgen.EndMarker + "\n")
	return buf.Bytes()
}

// BenchmarkDecode measures decoding the report of a list of 10,000 jobs
// (five records each), and of a logs script carrying 1 MiB of log.
func BenchmarkDecode(b *testing.B) {
	b.Run("list-10k-jobs", func(b *testing.B) {
		report := benchReport(b, 10000)
		b.SetBytes(int64(len(report)))
		b.ReportAllocs()
		for b.Loop() {
			jobs := 0
			err := decodeEvents(bytes.NewReader(report), func(ev streamEvent) error {
				if ev.Job != nil {
					jobs++
				}
				return nil
			})
			if err != nil || jobs != 10000 {
				b.Fatalf("Decode: %d jobs, %v", jobs, err)
			}
		}
	})
	b.Run("logs-1MiB", func(b *testing.B) {
		// The report comes from running the real logs script over a
		// fabricated job, so that it follows the script's framing.
		root := b.TempDir()
		ids, err := fixture.Make(fixture.Options{Root: root, Workspace: "bench", N: 1, LogLines: (1 << 20) / 80})
		if err != nil {
			b.Fatal(err)
		}
		script, err := shellgen.LogsScript(shellgen.Target{Root: root, Workspace: "bench"}, shellgen.Logs{Ref: ids[0]})
		if err != nil {
			b.Fatal(err)
		}
		report, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(root, "bench", ids[0], jobdir.StdoutFile))
		if err != nil {
			b.Fatal(err)
		}
		want := st.Size()
		b.SetBytes(want)
		b.ReportAllocs()
		for b.Loop() {
			var n int64
			err := decodeEvents(bytes.NewReader(report), func(ev streamEvent) error {
				if ev.Data != nil {
					m, err := io.Copy(io.Discard, ev.Data)
					n += m
					return err
				}
				return nil
			})
			if err != nil || n != want {
				b.Fatalf("Decode: %d bytes, want %d; %v", n, want, err)
			}
		}
	})
}

// capped is m with a 1 MiB log cap.
func capped(m jobdir.Meta) jobdir.Meta {
	m.MaxLogSize = 1 << 20
	return m
}
