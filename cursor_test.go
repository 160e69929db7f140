package bgjob

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestReportLeavesUnread: a report moves each stream's cursor over what
// was written less what its reader has not read yet, never back below
// where it was told or where the range began; a read delivered whole
// (Deliver) is reported only once nothing of it is unread.
func TestReportLeavesUnread(t *testing.T) {
	unread := map[string]int64{}
	c := newCommits(false)
	c.unread = func(st string) (int64, bool) { return unread[st], false }
	report := func() string {
		c.mu.Lock()
		c.report()
		s := string(c.buf)
		c.buf = nil
		c.mu.Unlock()
		return s
	}
	c.delivered("stdout", 1000, nil)
	c.delivered("stdout", 5000, []byte(strings.Repeat("0123456789", 400)))
	c.delivered("stderr", 200, nil)
	c.delivered("stderr", 300, []byte(strings.Repeat("e", 100)))
	unread["stdout"], unread["stderr"] = 3000, 0
	// With the mark of the log there: the 16 bytes delivered before it,
	// also where the reader left bytes unread (the cut of head -c).
	mark := fmt.Sprintf("%x", "4567890123456789")
	if got, want := report(), "stdout 2000 "+mark+"\nstderr 300 "+strings.Repeat("65", 16)+"\n"; got != want {
		t.Errorf("report %q, want %q", got, want)
	}
	// Both streams into one pipe: stderr's share of the unread is
	// unknown, and it never goes back.
	unread["stdout"], unread["stderr"] = 500, 500
	if got, want := report(), "stdout 4500 "+mark+"\n"; got != want {
		t.Errorf("report %q, want %q", got, want)
	}
	unread["stdout"] = 9000
	if got := report(); got != "" {
		t.Errorf("report %q: a cursor went back", got)
	}

	w := newCommits(true)
	w.unread = func(string) (int64, bool) { return unread["stdout"], true }
	w.deliver = func() error { w.release(); return nil }
	w.delivered("stdout", 0, nil)
	w.delivered("stdout", 5000, make([]byte, 5000))
	unread["stdout"] = 1
	if err := w.sent(make(chan struct{})); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(w)
	if strings.Contains(string(b), "5000") || strings.Contains(string(b), "4999") {
		t.Errorf("a whole read of which a byte is unread was reported: %q", b)
	}
}

// TestDeliveryWaitsAgainAfterALateRead: a host that read the reports late
// once (a busy machine) is waited for at the next report, so a reader
// killed then gets again at most what one report covers; only after
// maxMissed late reads in a row does a read stop waiting. (A read that
// stopped waiting after one late read left a reader 6 MB ahead of its
// cursor on a loaded CI machine.)
func TestDeliveryWaitsAgainAfterALateRead(t *testing.T) {
	c := newCommits(false)
	chunk := make([]byte, commitEvery)
	end := int64(0)
	deliver := func() {
		end += int64(len(chunk))
		c.delivered("stdout", end, chunk)
	}
	unread := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.buf)
	}
	// No one reads: the wait ends unread, once.
	deliver()
	if c.missed != 1 || unread() == 0 {
		t.Fatalf("after a report no one read: missed %d, %d bytes unread; want 1, some", c.missed, unread())
	}
	// Now the host reads, a moment later: the next report waits for it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(20 * time.Millisecond)
		c.Read(make([]byte, 64<<10))
	}()
	deliver()
	if n := unread(); n != 0 || c.missed != 0 {
		t.Errorf("a report after a late read: %d bytes left unread, missed %d; want it waited for (0, 0)", n, c.missed)
	}
	<-done
	// maxMissed late reads in a row: no more waits.
	for range maxMissed {
		deliver()
	}
	deliver()
	if c.missed != maxMissed {
		t.Errorf("after %d late reads and one more report: missed %d, want %d (no wait)", maxMissed, c.missed, maxMissed)
	}
}
