package bgjob

import (
	"io"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// reply is what a verb does with a script's report: shellgen.Handler with
// jobs derived (jobdir.Derive) and refusals turned into errors wrapping
// sentinels. A nil callback ignores what it would receive.
type reply struct {
	job       func(j jobdir.Job, outcome string) error
	refused   func(error) error
	removed   func(dir string) error
	data      func(stream string, offset int64, r io.Reader) error
	wait      func(state string)
	more      func()
	cut       func(stream string)
	scanned   func(stream string, offset int64)
	sent      func() error
	delivered func(n int64)
}

// handler returns the shellgen.Handler that feeds rp, for jobs on host.
func (rp reply) handler(host string) shellgen.Handler {
	h := shellgen.Handler{Removed: rp.removed, Data: rp.data, Wait: rp.wait, More: rp.more, Cut: rp.cut, Scanned: rp.scanned, Sent: rp.sent, Delivered: rp.delivered}
	if rp.job != nil {
		h.Job = func(o jobdir.Observation, outcome string) error { return rp.job(jobdir.Derive(o, host), outcome) }
	}
	if rp.refused != nil {
		h.Refused = func(kind, subject string) error { return rp.refused(refusal(kind, subject)) }
	}
	return h
}
