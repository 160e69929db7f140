// Package jobtext says a job in words for a person: how long it ran, its
// exit code, how it ended. The command line's tables and messages and
// top's screen say a job the same way through it.
package jobtext

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// Duration prints d to the second: 12s, 3m05s, 2h03m, 3d04h.
func Duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

// Exit is a job's exit code, "-" when it has none.
func Exit(j jobdir.Job) string {
	if j.ExitCode == nil {
		return "-"
	}
	return strconv.Itoa(*j.ExitCode)
}

// End says how a job ended and after how long: "exited 3 after 12s".
func End(j jobdir.Job) string {
	s := string(j.Status)
	switch {
	case j.Status == jobdir.StatusKilled && j.Signal != "":
		s += " (" + j.Signal + ")"
	case j.ExitCode != nil:
		s += " " + strconv.Itoa(*j.ExitCode)
	}
	if d, ok := j.Duration(time.Now()); ok {
		s += " after " + Duration(d)
	}
	return s
}
