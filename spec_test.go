package bgjob_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
)

// Validate holds every rule about a Spec, once: its errors wrap
// ErrUsage, and those about fields are *FieldErrors that a front end
// words with its own names.
func TestSpecValidate(t *testing.T) {
	flags := map[string]string{"Replace": "--replace", "Name": "--name", "Timeout": "--timeout", "PTYCols": "--pty-size", "PTY": "--pty"}
	argv := []string{"true"}
	for _, tc := range []struct {
		name string
		spec bgjob.Spec
		want string // in the message; "" for a valid spec
		flag string // the message worded with the CLI's flags; "" for no FieldError
	}{
		{"valid", bgjob.Spec{Argv: argv, Name: "web", Replace: true, Timeout: time.Hour, Env: []string{"A=1"}, PTY: true, PTYCols: 100}, "", ""},
		{"no command", bgjob.Spec{}, "invalid request: no command given", ""},
		{"bad id", bgjob.Spec{Argv: argv, ID: "x"}, `"x" is not a job id`, ""},
		{"replace without a name", bgjob.Spec{Argv: argv, Replace: true}, "invalid request: replace needs a job name: it stops the jobs of that name", "--replace needs --name: it stops the jobs of that name"},
		{"negative timeout", bgjob.Spec{Argv: argv, Timeout: -time.Second}, "timeout must not be negative", "--timeout must not be negative"},
		{"long timeout", bgjob.Spec{Argv: argv, Timeout: bgjob.MaxTimeout + 1}, "timeout 87600h0m0.000000001s is longer than 87600h0m0s", "--timeout 87600h0m0.000000001s is longer than 87600h0m0s"},
		{"bad env", bgjob.Spec{Argv: argv, Env: []string{"1A=x"}}, "invalid environment variable", ""},
		{"env with NUL", bgjob.Spec{Argv: argv, Env: []string{"A=x\x00"}}, "holds a NUL byte", ""},
		{"env of the job's marker", bgjob.Spec{Argv: argv, Env: []string{"BGJOB_JOB_ID=20261204T220000-aaaaaa"}}, "BGJOB_JOB_ID: bgjob sets it", ""},
		{"env of the job's directory", bgjob.Spec{Argv: argv, Env: []string{"A=1", "BGJOB_JOB_DIR=/tmp"}}, "BGJOB_JOB_DIR: bgjob sets it", ""},
		{"negative grace", bgjob.Spec{Argv: argv, Grace: new(-time.Second)}, "must not be negative", ""},
		{"size without PTY", bgjob.Spec{Argv: argv, PTYCols: 80, PTYRows: 24}, "a terminal size goes with PTY", "--pty-size goes with --pty"},
		{"huge terminal", bgjob.Spec{Argv: argv, PTY: true, PTYCols: 10001}, "terminal size 10001x0", ""},
		{"labels and ulimits", bgjob.Spec{Argv: argv, Labels: map[string]string{"team": "a"}, Ulimits: []jobdir.Ulimit{{Name: "nofile", Soft: 64, Hard: 64}}}, "", ""},
		{"bad label key", bgjob.Spec{Argv: argv, Labels: map[string]string{"a b": "x"}}, `invalid label: key "a b"`, ""},
		{"label of a meta.json field", bgjob.Spec{Argv: argv, Labels: map[string]string{"name": "x"}}, "is a field of meta.json", ""},
		{"unknown ulimit", bgjob.Spec{Argv: argv, Ulimits: []jobdir.Ulimit{{Name: "foo"}}}, `unknown limit "foo"`, ""},
		{"ulimit twice", bgjob.Spec{Argv: argv, Ulimits: []jobdir.Ulimit{{Name: "cpu", Soft: 1, Hard: 1}, {Name: "cpu", Soft: 2, Hard: 2}}}, "cpu is given twice", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, bgjob.ErrUsage) || bgjob.KindOf(err) != bgjob.KindUsage {
				t.Fatalf("Validate: %v (kind %q), want a usage error with %q", err, bgjob.KindOf(err), tc.want)
			}
			var fe *bgjob.FieldError
			switch {
			case tc.flag == "" && errors.As(err, &fe):
				t.Errorf("Validate: %v is a FieldError", err)
			case tc.flag != "" && !errors.As(err, &fe):
				t.Errorf("Validate: %v is no FieldError", err)
			case tc.flag != "" && fe.Text(func(f string) string { return flags[f] }) != tc.flag:
				t.Errorf("worded with flags: %q, want %q", fe.Text(func(f string) string { return flags[f] }), tc.flag)
			}
		})
	}
}

// The launch deadline is one minute, and twice the grace with Replace.
func TestLaunchTimeout(t *testing.T) {
	for _, tc := range []struct {
		spec bgjob.Spec
		want time.Duration
	}{
		{bgjob.Spec{}, time.Minute},
		{bgjob.Spec{Replace: true}, time.Minute + 2*bgjob.DefaultGrace},
		{bgjob.Spec{Replace: true, Grace: new(time.Duration(0))}, time.Minute},
		{bgjob.Spec{Replace: true, Grace: new(5 * time.Second)}, time.Minute + 10*time.Second},
		{bgjob.Spec{Grace: new(5 * time.Second)}, time.Minute},
	} {
		if got := tc.spec.LaunchTimeout(); got != tc.want {
			t.Errorf("%+v: LaunchTimeout %s, want %s", tc.spec, got, tc.want)
		}
	}
}
