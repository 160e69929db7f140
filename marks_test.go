package bgjob

import (
	"bytes"
	"testing"
)

// TestLogTailHoldsThePipe: a read's tail holds the mark wherever its
// reader got to among the last tailKeep bytes delivered, however many came
// before; none where it does not hold the bytes.
func TestLogTailHoldsThePipe(t *testing.T) {
	var tl logTail
	var all []byte
	for i := 0; len(all) < 3*tailKeep; i++ {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 32<<10)
		p[0] = byte(i)
		tl.add(int64(len(all)), p)
		all = append(all, p...)
	}
	end := int64(len(all))
	for _, off := range []int64{end, end - 1, end - tailKeep + 16, end - 64<<10 - 7} {
		if got, want := tl.at(off), all[off-16:off]; !bytes.Equal(got, want) {
			t.Errorf("at(end-%d) = %q, want %q", end-off, got, want)
		}
	}
	if got := tl.at(end - 3*tailKeep); got != nil {
		t.Errorf("at a byte not held: %q, want none", got)
	}
	// Bytes that do not follow on start it again.
	tl.add(end+10, []byte("xy"))
	if got := tl.at(end + 12); string(got) != "xy" {
		t.Errorf("after a gap: %q, want \"xy\"", got)
	}
}

// TestRewoundRangeStartsWhereTheReadDid: a log read again from its start
// whose --max-log-size cap dropped its first bytes is read from the
// dropped count: its range says so (the --max-bytes hint printed "bytes 0
// to N" of an empty read).
func TestRewoundRangeStartsWhereTheReadDid(t *testing.T) {
	var r LogResult
	r.grow("stdout", 100, 180)
	r.rewind("stdout")
	r.grow("stdout", 249920, 249920)
	if got := r.Ranges[0]; got.Offset != 249920 || got.Next != 249920 || !got.Rewound {
		t.Errorf("range %+v, want [249920, 249920) rewound", got)
	}
	r.grow("stdout", 249920, 250000)
	if got := r.Ranges[0]; got.Offset != 249920 || got.Next != 250000 {
		t.Errorf("range %+v, want [249920, 250000)", got)
	}
}
