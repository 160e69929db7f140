package mcp

import (
	"slices"
	"sync"

	"github.com/bgjob/bgjob"
)

// cursors holds the reads through a cursor whose results may not have
// been written out yet. The SDK writes a tool's result after its handler
// returns, so a read cannot move the cursor over what it returns: it
// holds it (bgjob.LogOptions.Hold), and the next read of the job through
// the same cursor, a call that comes after the result, moves it first
// (LogOptions.Commit), in the same script. A result that never reached the
// client (the server was killed, its stdout closed) thus leaves the
// cursor where it was: its bytes are returned again. A client that closes
// the server's input cleanly after the results (Server.Run) has had them:
// the server then moves the cursors over them (heldReads). Reads of one job
// through one cursor take turns, so that each starts where the one before
// it ended.
type cursors struct {
	mu    sync.Mutex
	turns map[cursorKey]*sync.Mutex     // by the job as the client named it
	held  map[cursorKey]bgjob.LogResult // by job id
	ids   map[cursorKey]string          // job id of each name or id read
}

// cursorKey is a job (an id, or a name as the client gave it) read through
// reader on host.
type cursorKey struct{ host, reader, job string }

// begin waits for the turn of ref's reads through reader on host and
// returns the read it holds for that job (nil: none) and the end of the
// turn, which the caller calls with the result of its read (nil: it
// failed), which the cursors hold instead.
func (cs *cursors) begin(host, reader, ref string) (*bgjob.LogResult, func(*bgjob.LogResult)) {
	k := cursorKey{host, reader, ref}
	cs.mu.Lock()
	if cs.turns == nil {
		cs.turns, cs.held, cs.ids = map[cursorKey]*sync.Mutex{}, map[cursorKey]bgjob.LogResult{}, map[cursorKey]string{}
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
	var commit *bgjob.LogResult
	if r, ok := cs.held[cursorKey{host, reader, id}]; ok {
		commit = &r
	}
	cs.mu.Unlock()
	return commit, func(res *bgjob.LogResult) {
		defer turn.Unlock()
		if res == nil {
			return
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		j := res.Job
		r := *res
		r.Ranges = slices.Clone(res.Ranges)
		cs.held[cursorKey{host, reader, j.ID}] = r
		for _, name := range []string{ref, j.ID, j.Name} {
			if name != "" {
				cs.ids[cursorKey{host, reader, name}] = j.ID
			}
		}
	}
}

// heldRead is a read a cursor holds: of a job on host through reader.
type heldRead struct {
	host, reader string
	res          bgjob.LogResult
}

// heldReads returns the reads held, one for each job and cursor.
func (cs *cursors) heldReads() []heldRead {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var hs []heldRead
	for k, r := range cs.held {
		hs = append(hs, heldRead{k.host, k.reader, r})
	}
	return hs
}
