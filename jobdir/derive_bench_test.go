package jobdir_test

import (
	"testing"

	"github.com/bgjob/bgjob/jobdir"
)

// BenchmarkDerive measures turning one observation into a job report, for
// each kind of outcome; ls calls it once per job shown.
func BenchmarkDerive(b *testing.B) {
	m := testMeta()
	line, err := jobdir.EncodeMeta(m)
	if err != nil {
		b.Fatal(err)
	}
	base := jobdir.Observation{Dir: testDir, Meta: string(line), HasMeta: true, BootID: testBoot}
	cases := []struct {
		name string
		obs  func(o *jobdir.Observation)
	}{
		{"running", func(o *jobdir.Observation) { o.ProcStart = m.ProcStart }},
		{"exited", func(o *jobdir.Observation) {
			o.ExitCode, o.HasExit, o.EndedAt = "0", true, "2026-11-30T00:20:00Z"
		}},
		{"killed", func(o *jobdir.Observation) {
			o.ExitCode, o.HasExit, o.EndedAt, o.Stop = "143", true, "2026-11-30T00:20:00Z", "stop TERM"
		}},
		{"lost", func(o *jobdir.Observation) {}},
		{"unreadable", func(o *jobdir.Observation) { o.Meta = `{"version":1,` }},
	}
	for _, c := range cases {
		o := base
		c.obs(&o)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				jobdir.Derive(o, "")
			}
		})
	}
}
