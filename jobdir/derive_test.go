package jobdir_test

import (
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
)

const (
	testID   = "20261130T001502-k3f9q2"
	testDir  = "/tmp/bgjob-0/default/" + testID
	testBoot = "5f1c2c3e-0d7a-4a8e-9d55-7b8b3f2e1a90"
)

func testMeta() jobdir.Meta {
	return jobdir.Meta{
		Version:   jobdir.Version,
		ID:        testID,
		Name:      "build",
		Workspace: jobdir.DefaultWorkspace,
		Command:   "make -j4",
		Cwd:       "/src",
		Env:       []string{},
		StartedAt: time.Date(2026, 11, 30, 0, 15, 2, 0, time.UTC),
		PID:       4242,
		PGID:      4242,
		ProcStart: "987654",
		BootID:    testBoot,
	}
}

func metaLine(t *testing.T, m jobdir.Meta) string {
	t.Helper()
	b, err := jobdir.EncodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func intp(n int) *int { return &n }

// result is the part of a Job that Derive decides.
type result struct {
	Status   jobdir.Status
	ExitCode *int
	EndedAt  *time.Time
	Reason   string
	Signal   string
	// ErrorHas is a substring Job.Error must contain ("" for no error).
	ErrorHas string
}

func TestDerive(t *testing.T) {
	ended := time.Date(2026, 11, 30, 0, 20, 0, 0, time.UTC)
	good := metaLine(t, testMeta())
	noBoot := testMeta()
	noBoot.BootID = ""
	otherID := testMeta()
	otherID.ID = "20261130T001502-zzzzzz"
	noStart := testMeta()
	noStart.ProcStart = ""
	cpuLimited := testMeta()
	cpuLimited.Ulimits = []jobdir.Ulimit{{Name: "cpu", Soft: 1, Hard: 1}}

	// ended is an observation of a job whose wrapper wrote exit_code.
	exited := func(code, stop string) jobdir.Observation {
		return jobdir.Observation{Dir: testDir, Meta: good, HasMeta: true, ExitCode: code, HasExit: true,
			EndedAt: "2026-11-30T00:20:00Z", Stop: stop, BootID: testBoot}
	}
	// live is an observation without exit_code.
	live := func(procStart, boot string) jobdir.Observation {
		return jobdir.Observation{Dir: testDir, Meta: good, HasMeta: true, ProcStart: procStart, BootID: boot}
	}
	with := func(o jobdir.Observation, f func(*jobdir.Observation)) jobdir.Observation {
		f(&o)
		return o
	}

	tests := []struct {
		name string
		obs  jobdir.Observation
		want result
	}{
		{"exit 0", exited("0", ""), result{Status: jobdir.StatusExited, ExitCode: intp(0), EndedAt: &ended}},
		{"exit 7", exited("7", ""), result{Status: jobdir.StatusExited, ExitCode: intp(7), EndedAt: &ended}},
		{"exit 143 without stop marker is the command's own status", exited("143", ""),
			result{Status: jobdir.StatusExited, ExitCode: intp(143), EndedAt: &ended}},
		{"exit 143 with stop marker", exited("143", "stop TERM"),
			result{Status: jobdir.StatusKilled, ExitCode: intp(143), EndedAt: &ended, Reason: "stop", Signal: "TERM"}},
		{"exit 137 after timeout", exited("137", "timeout TERM"),
			result{Status: jobdir.StatusKilled, ExitCode: intp(137), EndedAt: &ended, Reason: "timeout", Signal: "TERM"}},
		{"exit 130 stopped with INT", exited("130", "stop INT"),
			result{Status: jobdir.StatusKilled, ExitCode: intp(130), EndedAt: &ended, Reason: "stop", Signal: "INT"}},
		// Ended on its own when stopped: exited, with the stop's reason.
		{"stop marker but exit 0 stays exited", exited("0", "stop TERM"),
			result{Status: jobdir.StatusExited, ExitCode: intp(0), EndedAt: &ended, Reason: "stop"}},
		{"stop marker but exit 1 stays exited", exited("1", "stop TERM"),
			result{Status: jobdir.StatusExited, ExitCode: intp(1), EndedAt: &ended, Reason: "stop"}},
		{"stop marker and exit 128 is not a signal", exited("128", "stop TERM"),
			result{Status: jobdir.StatusExited, ExitCode: intp(128), EndedAt: &ended, Reason: "stop"}},
		{"timeout marker but exit 0 stays exited", exited("0", "timeout TERM"),
			result{Status: jobdir.StatusExited, ExitCode: intp(0), EndedAt: &ended, Reason: "timeout"}},
		// Killed by a resource limit's signal: the reason says which.
		{"exit 152 is SIGXCPU", exited("152", ""),
			result{Status: jobdir.StatusExited, ExitCode: intp(152), EndedAt: &ended, Reason: "cpu_limit"}},
		{"exit 153 is SIGXFSZ", exited("153", ""),
			result{Status: jobdir.StatusExited, ExitCode: intp(153), EndedAt: &ended, Reason: "fsize_limit"}},
		{"exit 137 with a hard CPU limit is the kernel's KILL at it",
			with(exited("137", ""), func(o *jobdir.Observation) { o.Meta = metaLine(t, cpuLimited) }),
			result{Status: jobdir.StatusExited, ExitCode: intp(137), EndedAt: &ended, Reason: "cpu_limit"}},
		{"exit 137 without a CPU limit says nothing", exited("137", ""),
			result{Status: jobdir.StatusExited, ExitCode: intp(137), EndedAt: &ended}},
		{"a stop's reason wins over a limit's signal",
			with(exited("137", "stop KILL"), func(o *jobdir.Observation) { o.Meta = metaLine(t, cpuLimited) }),
			result{Status: jobdir.StatusKilled, ExitCode: intp(137), EndedAt: &ended, Reason: "stop", Signal: "KILL"}},
		{"a limit the shell could not set: not run",
			with(exited("125", ""), func(o *jobdir.Observation) {
				o.NotRun = "ulimit nofile=64:64: cannot be set on this host by its sh (ulimit -n: x)"
			}),
			result{Status: jobdir.StatusNotRun, EndedAt: &ended, Reason: "ulimit", ErrorHas: "ulimit nofile=64:64"}},
		{"exit code with surrounding space", exited(" 3 ", ""),
			result{Status: jobdir.StatusExited, ExitCode: intp(3), EndedAt: &ended}},
		{"garbage ended_at leaves EndedAt unset",
			with(exited("0", ""), func(o *jobdir.Observation) { o.EndedAt = "yesterday" }),
			result{Status: jobdir.StatusExited, ExitCode: intp(0)}},
		{"exit_code wins over a live pid",
			with(exited("2", ""), func(o *jobdir.Observation) { o.ProcStart = "987654" }),
			result{Status: jobdir.StatusExited, ExitCode: intp(2), EndedAt: &ended}},
		{"exit_code wins over a reboot",
			with(exited("2", ""), func(o *jobdir.Observation) { o.BootID = "other-boot" }),
			result{Status: jobdir.StatusExited, ExitCode: intp(2), EndedAt: &ended}},
		{"garbage exit_code", exited("abc", ""), result{Status: jobdir.StatusUnreadable, ErrorHas: "exit_code"}},
		{"empty exit_code", exited("", ""), result{Status: jobdir.StatusUnreadable, ErrorHas: "exit_code"}},
		{"exit_code beyond int", exited("99999999999999999999", ""), result{Status: jobdir.StatusUnreadable, ErrorHas: "exit_code"}},

		{"running", live("987654", testBoot), result{Status: jobdir.StatusRunning}},
		{"running on a host without boot id", live("987654", ""), result{Status: jobdir.StatusRunning}},
		{"running, meta without boot id",
			with(live("987654", testBoot), func(o *jobdir.Observation) { o.Meta = metaLine(t, noBoot) }),
			result{Status: jobdir.StatusRunning}},
		{"lost: process gone", live("", testBoot), result{Status: jobdir.StatusLost, Reason: "vanished"}},
		{"lost: pid recycled (start time differs)", live("123", testBoot), result{Status: jobdir.StatusLost, Reason: "vanished"}},
		{"lost: empty start times never match",
			with(live("", testBoot), func(o *jobdir.Observation) { o.Meta = metaLine(t, noStart) }),
			result{Status: jobdir.StatusLost, Reason: "vanished"}},
		{"lost: reboot", live("", "other-boot"), result{Status: jobdir.StatusLost, Reason: "reboot"}},
		{"lost: reboot even if the start time matches by chance", live("987654", "other-boot"),
			result{Status: jobdir.StatusLost, Reason: "reboot"}},
		{"stop marker without exit_code is still running",
			with(live("987654", testBoot), func(o *jobdir.Observation) { o.Stop = "stop TERM" }),
			result{Status: jobdir.StatusRunning}},

		{"missing meta.json", jobdir.Observation{Dir: testDir, ExitCode: "0", HasExit: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "missing"}},
		{"empty meta.json", jobdir.Observation{Dir: testDir, HasMeta: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "meta.json is empty or cannot be read"}},
		{"garbage meta.json", jobdir.Observation{Dir: testDir, Meta: "not json at all", HasMeta: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "meta.json"}},
		{"truncated meta.json", jobdir.Observation{Dir: testDir, Meta: good[:len(good)/2], HasMeta: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "meta.json"}},
		{"meta.json of the wrong type", jobdir.Observation{Dir: testDir, Meta: `{"id":42}`, HasMeta: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "meta.json"}},
		{"meta.json too large to read", jobdir.Observation{Dir: testDir, HasMeta: true, MetaTooLarge: true, ExitCode: "0", HasExit: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "larger than 4194304 bytes"}},
		{"id does not match the directory",
			jobdir.Observation{Dir: testDir, Meta: metaLine(t, otherID), HasMeta: true, ExitCode: "0", HasExit: true},
			result{Status: jobdir.StatusUnreadable, ErrorHas: "does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := jobdir.Derive(tt.obs, "host1")
			got := result{Status: j.Status, ExitCode: j.ExitCode, EndedAt: j.EndedAt, Reason: j.Reason, Signal: j.Signal}
			if tt.want.ErrorHas != "" {
				if !strings.Contains(j.Error, tt.want.ErrorHas) {
					t.Errorf("Error = %q, want it to contain %q", j.Error, tt.want.ErrorHas)
				}
				got.ErrorHas = tt.want.ErrorHas
			} else if j.Error != "" {
				t.Errorf("Error = %q, want none", j.Error)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Derive() mismatch (-want +got):\n%s", diff)
			}
			// Whatever the status, the job is named by its directory and
			// its paths are filled in.
			if j.ID != testID || j.Host != "host1" || j.Dir != testDir ||
				j.StdoutPath != testDir+"/stdout.log" || j.StderrPath != testDir+"/stderr.log" {
				t.Errorf("identity = %q %q %q %q %q", j.ID, j.Host, j.Dir, j.StdoutPath, j.StderrPath)
			}
			// A meta.json that cannot be trusted contributes nothing but
			// the id and the workspace, which come from the directory.
			if j.Status == jobdir.StatusUnreadable && tt.want.ErrorHas != "exit_code" {
				if diff := cmp.Diff(jobdir.Meta{ID: testID, Workspace: path.Base(path.Dir(testDir))}, j.Meta); diff != "" {
					t.Errorf("unreadable job carries meta (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDeriveKeepsMeta checks that a readable job reports its meta.json
// unchanged, and that the --json form of a job has the documented keys.
func TestDeriveKeepsMeta(t *testing.T) {
	m := testMeta()
	m.Argv = []string{"make", "-j4"}
	m.Timeout = "1m0s"
	j := jobdir.Derive(jobdir.Observation{Dir: testDir, Meta: metaLine(t, m), HasMeta: true, ProcStart: m.ProcStart, BootID: testBoot}, "h")
	if diff := cmp.Diff(m, j.Meta); diff != "" {
		t.Errorf("Meta mismatch (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "id", "name", "workspace", "command", "argv", "cwd", "env", "timeout",
		"started_at", "pid", "pgid", "proc_start", "boot_id", "host", "status", "exit_code", "ended_at", "dir",
		"stdout_path", "stderr_path"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("--json output lacks %q: %s", k, b)
		}
	}
	if keys["status"] != "running" || keys["exit_code"] != nil {
		t.Errorf("status, exit_code = %v, %v; want running, null", keys["status"], keys["exit_code"])
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in      string
		want    jobdir.Status
		wantErr bool
		ended   bool
		active  bool
	}{
		{in: "running", want: jobdir.StatusRunning, active: true},
		{in: "queued", want: jobdir.StatusQueued, active: true},
		{in: "exited", want: jobdir.StatusExited, ended: true},
		{in: "killed", want: jobdir.StatusKilled, ended: true},
		{in: "lost", want: jobdir.StatusLost, ended: true},
		{in: "not_run", want: jobdir.StatusNotRun, ended: true},
		{in: "unreadable", want: jobdir.StatusUnreadable},
		{in: "", wantErr: true},
		{in: "Running", wantErr: true},
		{in: "done", wantErr: true},
		{in: " exited", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := jobdir.ParseStatus(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseStatus(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseStatus(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if err == nil && got.Ended() != tt.ended {
				t.Errorf("%q.Ended() = %v, want %v", got, got.Ended(), tt.ended)
			}
			if err == nil && got.Active() != tt.active {
				t.Errorf("%q.Active() = %v, want %v", got, got.Active(), tt.active)
			}
		})
	}
}

// TestDerivePSStart: where the host has no /proc the start time is ps's
// lstart, which pads a day below 10 with a second space; the scripts read
// it back with one. The wrapper is the job's either way.
func TestDerivePSStart(t *testing.T) {
	for _, tc := range []struct{ meta, seen string }{
		{"Tue Dec  1 10:31:40 2026", "Tue Dec 1 10:31:40 2026"},
		{"Tue Dec 1 10:31:40 2026", "Tue Dec 1 10:31:40 2026"},
	} {
		m := testMeta()
		m.ProcStart, m.BootID = tc.meta, ""
		j := jobdir.Derive(jobdir.Observation{Dir: testDir, Meta: metaLine(t, m), HasMeta: true, ProcStart: tc.seen, ProcessScan: "ps"}, "")
		if j.Status != jobdir.StatusRunning {
			t.Errorf("proc_start %q, seen %q: %s, want running", tc.meta, tc.seen, j.Status)
		}
	}
	m := testMeta()
	m.ProcStart, m.BootID = "Tue Dec  1 10:31:40 2026", ""
	if j := jobdir.Derive(jobdir.Observation{Dir: testDir, Meta: metaLine(t, m), HasMeta: true, ProcStart: "Tue Dec 1 10:31:41 2026"}, ""); j.Status != jobdir.StatusLost {
		t.Errorf("another start time: %s, want lost", j.Status)
	}
}

// TestDeriveReadyAt: a job's ready_at, written as the ready script writes
// it, is its ReadyAt to the nanosecond and its JSON's ready_at; a job
// without one has neither, and a line that is no time is left out.
func TestDeriveReadyAt(t *testing.T) {
	at := time.Date(2026, 12, 7, 14, 3, 4, 5006007, time.UTC)
	line := strings.TrimSuffix(string(jobdir.EncodeReadyAt(at)), "\n")
	if want := "2026-12-07T14:03:04.005006007Z"; line != want {
		t.Fatalf("EncodeReadyAt = %q, want %q", line, want)
	}
	for _, tc := range []struct {
		name, line string
		want       *time.Time
	}{
		{"ready", line, &at},
		{"none", "", nil},
		{"not a time", "soon", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := jobdir.Observation{Dir: testDir, Meta: metaLine(t, testMeta()), HasMeta: true, ProcStart: "987654", BootID: testBoot, ReadyAt: tc.line}
			j := jobdir.Derive(o, "")
			if diff := cmp.Diff(tc.want, j.ReadyAt); diff != "" {
				t.Errorf("ReadyAt (-want +got):\n%s", diff)
			}
			b, err := json.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"ready_at":"2026-12-07T14:03:04.005006007Z"`); got != (tc.want != nil) {
				t.Errorf("JSON holds ready_at: %v, want %v:\n%s", got, tc.want != nil, b)
			}
		})
	}
}
