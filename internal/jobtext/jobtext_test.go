package jobtext

import (
	"testing"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1499 * time.Millisecond, "1s"},
		{59 * time.Second, "59s"},
		{3*time.Minute + 5*time.Second, "3m05s"},
		{2*time.Hour + 3*time.Minute + 59*time.Second, "2h03m"},
		{76 * time.Hour, "3d04h"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Duration(tt.d); got != tt.want {
				t.Errorf("Duration(%s) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	end := start.Add(12 * time.Second)
	three, kill := 3, 143
	tests := []struct {
		name string
		j    jobdir.Job
		want string
	}{
		{"exited", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusExited, ExitCode: &three, EndedAt: &end}, "exited 3 after 12s"},
		{"killed", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusKilled, ExitCode: &kill, Signal: "TERM", EndedAt: &end}, "killed (TERM) after 12s"},
		{"lost, no end time", jobdir.Job{Meta: jobdir.Meta{StartedAt: start}, Status: jobdir.StatusLost}, "lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := End(tt.j); got != tt.want {
				t.Errorf("End = %q, want %q", got, tt.want)
			}
		})
	}
}
