package mcp

import (
	"sync"

	"github.com/bgjob/bgjob"
)

// cursors holds the read cursors of job_output: a bgjob.Cursor for each
// job read through each reader on each host. The SDK writes a tool's
// result after its handler returns, so a read cannot move the cursor over
// what it returns: it holds it (bgjob.Cursor.Hold), and tells the job's
// Cursor that it was delivered (Delivered), as it will have been by the
// next read of the job through the same cursor, a call that comes after
// the result; that read moves the cursor over it first, in the same
// script. A result that never reached the client (the server was killed,
// its stdout closed) thus leaves the cursor where it was: its bytes are
// returned again. A client that closes the server's input cleanly after
// the results (Server.Run) has had them: the server then moves the cursors
// over them (held). Reads of one job through one cursor take turns, so
// that each starts where the one before it ended.
type cursors struct {
	mu    sync.Mutex
	turns map[cursorKey]*sync.Mutex   // by the job as the client named it
	byID  map[cursorKey]*bgjob.Cursor // by job id
	ids   map[cursorKey]string        // job id of each name or id read
}

// cursorKey is a job (an id, or a name as the client gave it) read through
// reader on host.
type cursorKey struct{ host, reader, job string }

// begin waits for the turn of ref's reads through reader on host and
// returns the Cursor to read the job through and the end of the turn,
// which the caller calls with the result of its read (nil: it failed):
// the Cursor of the job read is told it was delivered.
func (cs *cursors) begin(host, reader, ref string) (*bgjob.Cursor, func(*bgjob.LogResult)) {
	k := cursorKey{host, reader, ref}
	cs.mu.Lock()
	if cs.turns == nil {
		cs.turns, cs.byID, cs.ids = map[cursorKey]*sync.Mutex{}, map[cursorKey]*bgjob.Cursor{}, map[cursorKey]string{}
	}
	turn := cs.turns[k]
	if turn == nil {
		turn = &sync.Mutex{}
		cs.turns[k] = turn
	}
	cs.mu.Unlock()
	turn.Lock()
	cs.mu.Lock()
	id := ref
	if known, ok := cs.ids[k]; ok {
		id = known
	}
	cur := cs.byID[cursorKey{host, reader, id}]
	if cur == nil {
		cur = &bgjob.Cursor{Reader: reader, Hold: true}
	}
	cs.mu.Unlock()
	return cur, func(res *bgjob.LogResult) {
		defer turn.Unlock()
		if res == nil {
			return
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		j := res.Job
		// ref may name another job now than the one its Cursor was
		// told of: the read is delivered to its own job's.
		held := cs.byID[cursorKey{host, reader, j.ID}]
		if held == nil {
			held = &bgjob.Cursor{Reader: reader, Hold: true}
			cs.byID[cursorKey{host, reader, j.ID}] = held
		}
		held.Delivered(*res)
		for _, name := range []string{ref, j.ID, j.Name} {
			if name != "" {
				cs.ids[cursorKey{host, reader, name}] = j.ID
			}
		}
	}
}

// heldRead is the Cursor of a job read on host, told of a read delivered.
type heldRead struct {
	host, id string
	cur      *bgjob.Cursor
}

// held returns the Cursor of each job read, each told of the last read
// through it.
func (cs *cursors) held() []heldRead {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var hs []heldRead
	for k, cur := range cs.byID {
		hs = append(hs, heldRead{k.host, k.job, cur})
	}
	return hs
}
