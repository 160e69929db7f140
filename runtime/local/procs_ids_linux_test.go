package local

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestJobShIDs: jobShIDs finds what bg_wrapperof's grep -o finds, the ids
// of each "/ID/job.sh" in a command line.
func TestJobShIDs(t *testing.T) {
	re := regexp.MustCompile(`/[0-9]{8}T[0-9]{6}-[0-9a-z]{6}/job\.sh`)
	const id, id2 = "20261205T172614-32zrmt", "20261205T172615-abc123"
	for _, s := range []string{
		"", "/bin/sh\x00/r/default/" + id + "/job.sh\x00run\x000022\x00gate\x00",
		id + "/job.sh", "/" + id + "/job.sh", "x/" + id + "/job.sh/" + id2 + "/job.sh",
		"/" + id + "/job.sh/job.sh", "/" + id + "/job.s", "/" + strings.ToUpper(id) + "/job.sh",
		"/20261205T172614_32zrmt/job.sh", "/" + id + "x/job.sh", "//" + id + "/job.sh\n/" + id2 + "/job.sh",
		"tail\x00-f\x00/" + id + "/job.sh\x00/" + id2 + "/job.sh\x00", "/job.sh", "/" + id[1:] + "/job.sh",
	} {
		var want []string
		for _, m := range re.FindAllString(s, -1) {
			want = append(want, strings.TrimSuffix(m[1:], "/job.sh"))
		}
		if got := jobShIDs([]byte(s)); !slices.Equal(got, want) {
			t.Errorf("jobShIDs(%q) = %q, want %q", s, got, want)
		}
	}
}
