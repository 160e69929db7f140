package shellgen_test

import (
	"testing"

	"github.com/bgjob/bgjob/shellgen"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for an error
	}{
		{"TERM", "TERM"},
		{"term", "TERM"},
		{"SIGTERM", "TERM"},
		{"sigterm", "TERM"},
		{"SigTerm", "TERM"},
		{"15", "TERM"},
		{"INT", "INT"},
		{"2", "INT"},
		{"QUIT", "QUIT"},
		{"3", "QUIT"},
		{"HUP", "HUP"},
		{"1", "HUP"},
		{"KILL", "KILL"},
		{"SIGKILL", "KILL"},
		{"9", "KILL"},
		{"USR1", "USR1"},
		{"10", "USR1"},
		{"USR2", "USR2"},
		{"12", "USR2"},
		{"ALRM", "ALRM"},
		{"14", "ALRM"},
		{"", ""},
		{"SIG", ""},
		{"0", ""},
		{"-15", ""},
		{"015", ""},
		{"STOP", ""},
		{"SIGSTOP", ""},
		{"19", ""},
		{"CONT", ""},
		{"SIGSIGTERM", ""},
		{" TERM", ""},
		{"TERM ", ""},
		{"TERM;reboot", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := shellgen.ParseSignal(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Errorf("ParseSignal(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseSignal(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}
